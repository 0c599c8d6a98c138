/** Per-phase measurements of the soak: API call latencies, errors, finished operations. */
export type Phase = 'before' | 'during' | 'after';

export interface PhaseFigures {
  seconds: number;
  apiCalls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  operationsFinished: number;
  operationsPerSecond: number;
  /** Failed attempts that were retried (connection errors, 5xx), by a short description. */
  retriedErrors: Record<string, number>;
}

interface PhaseSamples {
  startedAt: number;
  endedAt?: number;
  latencies: number[];
  finished: number;
  errors: Map<string, number>;
}

export class Recorder {
  phase: Phase = 'before';
  private readonly phases = new Map<Phase, PhaseSamples>([['before', newSamples()]]);

  enter(phase: Phase): void {
    const now = Date.now();
    this.current().endedAt = now;
    this.phase = phase;
    this.phases.set(phase, newSamples(now));
  }

  call(ms: number): void {
    this.current().latencies.push(ms);
  }

  error(description: string): void {
    const errors = this.current().errors;
    errors.set(description, (errors.get(description) ?? 0) + 1);
  }

  finished(): void {
    this.current().finished += 1;
  }

  figures(): Partial<Record<Phase, PhaseFigures>> {
    const out: Partial<Record<Phase, PhaseFigures>> = {};
    for (const [phase, s] of this.phases) {
      const seconds = Math.max(0.001, ((s.endedAt ?? Date.now()) - s.startedAt) / 1000);
      const sorted = [...s.latencies].sort((a, b) => a - b);
      out[phase] = {
        seconds: round(seconds),
        apiCalls: sorted.length,
        callsPerSecond: round(sorted.length / seconds),
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        operationsFinished: s.finished,
        operationsPerSecond: round(s.finished / seconds),
        retriedErrors: Object.fromEntries(s.errors),
      };
    }
    return out;
  }

  private current(): PhaseSamples {
    return this.phases.get(this.phase)!;
  }
}

function newSamples(startedAt = Date.now()): PhaseSamples {
  return { startedAt, latencies: [], finished: 0, errors: new Map() };
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!);
}

const round = (n: number) => Math.round(n * 10) / 10;

import { DEFAULT_HEALTHY_AFTER_MS } from '../domain/remediation';

/** One probe run's verdict on its condition: healthy, or not and why. */
export type ProbeVerdict = { healthy: true } | { healthy: false; reason: string };

/** A condition report: `status: true` is the fault, `false` says it cleared. */
export interface ConditionReport {
  status: boolean;
  reason?: string;
}

/**
 * What the agent says of one condition, from its probe's verdicts. A fault is reported at once; a
 * clear only once the probe has held healthy for `healthyAfter` — as long as the API's answer to
 * the last report of this condition said (`healthyAfterSeconds`; 60 s until it has answered). A
 * fault seen during that wait starts it over, so a probe flapping faster than `healthyAfter`
 * never reports a clear. Reported on change only; `resend` makes the current status due again
 * (after a reconnect the API may have missed a report). Time is passed in, not read.
 */
export class DampedCondition {
  private healthyAfterMs = DEFAULT_HEALTHY_AFTER_MS;
  /** When the current run of healthy verdicts began; null while the fault shows. */
  private healthySince: number | null = null;
  private wanted: ConditionReport | null = null;
  /** The status the API last took; null: none yet, or to be said again. */
  private sent: boolean | null = null;

  /**
   * Takes a verdict seen at `now`; answers `'clearing'` when it starts a wait for a clear (so the
   * agent can say when the clear is due), else null.
   */
  observe(verdict: ProbeVerdict, now: number): 'clearing' | null {
    if (!verdict.healthy) {
      this.healthySince = null;
      this.wanted = { status: true, reason: verdict.reason };
      return null;
    }
    const starts = this.healthySince === null && this.wanted?.status !== false;
    this.healthySince ??= now;
    if (this.wanted?.status !== false && now - this.healthySince >= this.healthyAfterMs) {
      this.wanted = { status: false };
    }
    return starts && this.wanted?.status !== false ? 'clearing' : null;
  }

  /** How long a clear waits now (ms). */
  get clearAfterMs(): number {
    return this.healthyAfterMs;
  }

  /** The report due now, if any. */
  due(): ConditionReport | null {
    return this.wanted && this.wanted.status !== this.sent ? this.wanted : null;
  }

  /** The API took `report`, answering how long this condition must hold clear from now on. */
  took(report: ConditionReport, healthyAfterSeconds: number): void {
    this.sent = report.status;
    this.healthyAfterMs = healthyAfterSeconds * 1000;
  }

  /** Say the current status again (the API may have missed it). */
  resend(): void {
    this.sent = null;
  }
}

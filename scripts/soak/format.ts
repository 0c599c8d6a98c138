import type { SoakResult } from './soak';

/** The soak's result as the text an operator reads: phases, faults, operations, violations. */
export function formatResult(result: SoakResult): string {
  const lines = [
    `soak ${result.mode} (seed ${result.seed}): ${result.seconds} s`,
    '',
    'phase    seconds  calls/s  p50 ms  p99 ms  ops done  ops/s  retried errors',
  ];
  for (const [phase, f] of Object.entries(result.phases)) {
    const errors =
      Object.entries(f.retriedErrors)
        .map(([what, n]) => `${n}× ${what}`)
        .join('; ') || '-';
    lines.push(
      `${phase.padEnd(8)} ${String(f.seconds).padStart(7)}  ${String(f.callsPerSecond).padStart(7)}  ${String(f.p50Ms).padStart(6)}  ${String(f.p99Ms).padStart(6)}  ${String(f.operationsFinished).padStart(8)}  ${String(f.operationsPerSecond).padStart(5)}  ${errors}`,
    );
  }
  lines.push('', 'fault                        restart ms  recovered ms  evidence');
  for (const f of result.faults) {
    lines.push(
      `${f.name.padEnd(28)} ${String(f.restartMs).padStart(10)}  ${String(f.recoveryMs).padStart(12)}  ${f.evidence}`,
    );
  }
  lines.push('', 'operation      ended                                        p50 ms  p99 ms');
  for (const [kind, statuses] of Object.entries(result.operations)) {
    const ended = Object.entries(statuses)
      .map(([s, n]) => `${n} ${s}`)
      .join(', ');
    const l = result.operationLatency[kind]!;
    lines.push(
      `${kind.padEnd(14)} ${ended.padEnd(44)} ${String(l.p50Ms).padStart(6)}  ${String(l.p99Ms).padStart(6)}`,
    );
  }
  lines.push('', result.violations.length ? `${result.violations.length} violation(s):` : 'no violations');
  for (const v of result.violations) lines.push(`  - ${v}`);
  return lines.join('\n');
}

import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { recordedLines, useScripts } from '../test/support/scripts';
import type { ProbeConfig } from './config';
import { Probes } from './probes';

const { dir, script } = useScripts('drydock-probes-');

/** A probe script that appends a line to `file` each time it runs, then exits `code`. */
function counting(file: string, code: number): string {
  return script(`echo run >> '${file}'\nexit ${code}`);
}
const runs = (file: string) => recordedLines(file).length;

const probe = (command: string[], condition: string, more: Partial<ProbeConfig> = {}): ProbeConfig => ({
  command,
  condition,
  everyMs: 50,
  timeoutMs: 2_000,
  ...more,
});

/** Probes against a client that records each report and answers `healthyAfterSeconds: 60`. */
function probes(config: Record<string, ProbeConfig>, fail = () => false) {
  const reports: { type: string; status: boolean; reason?: string }[] = [];
  const logs: string[] = [];
  const runner = new Probes({
    probes: config,
    nodeId: 'node_test',
    log: (level, message) => logs.push(`${level}: ${message}`),
    client: {
      async reportCondition(type, status, reason) {
        if (fail()) throw new Error('the API is unreachable');
        reports.push({ type, status, ...(reason === undefined ? {} : { reason }) });
        return { healthyAfterSeconds: 60 };
      },
    },
  });
  const stop = new AbortController();
  const running = runner.run(stop.signal);
  return {
    runner,
    reports,
    logs,
    async stop() {
      stop.abort();
      await running;
    },
  };
}

describe('Probes', () => {
  it('a fault is reported once, its reason the first line of stdout, else stderr, else the exit status; clean of control characters', async () => {
    const p = probes({
      out: probe([script('printf "\\n  xid-79\\tGPU 0\\nmore\\n"; echo err >&2; exit 1')], 'GpuXidError'),
      err: probe([script('echo "nvidia-smi: not found" >&2; exit 2')], 'GpuMissing'),
      bare: probe([counting(join(dir, 'bare.runs'), 7)], 'NicFlap'),
      slow: probe([script('sleep 5')], 'DiskSlow', { timeoutMs: 200 }),
      env: probe([script('echo "$DRYDOCK_NODE_ID $DRYDOCK_CONDITION"; exit 1')], 'EnvSeen'),
    });
    await vi.waitFor(() => expect(p.reports).toHaveLength(5), { timeout: 5_000 });
    // Runs go on, every 50 ms: nothing changed, so nothing more is reported.
    const seen = runs(join(dir, 'bare.runs'));
    await vi.waitFor(() => expect(runs(join(dir, 'bare.runs'))).toBeGreaterThan(seen + 3), {
      timeout: 5_000,
    });
    await p.stop();
    expect(p.logs).toHaveLength(5);
    expect(p.reports.sort((a, b) => a.type.localeCompare(b.type))).toEqual([
      { type: 'DiskSlow', status: true, reason: 'timed out after 200 ms' },
      { type: 'EnvSeen', status: true, reason: 'node_test EnvSeen' },
      { type: 'GpuMissing', status: true, reason: 'nvidia-smi: not found' },
      { type: 'GpuXidError', status: true, reason: 'xid-79 GPU 0' },
      { type: 'NicFlap', status: true, reason: 'exit 7' },
    ]);
  });

  it('after a reconnect every reported condition is said again', async () => {
    const p = probes({ gpu: probe([script('echo xid-48; exit 1')], 'GpuXidError') });
    await vi.waitFor(() => expect(p.reports).toHaveLength(1));
    p.runner.reconnected();
    await vi.waitFor(() => expect(p.reports).toHaveLength(2));
    await p.stop();
    expect(p.reports).toEqual([
      { type: 'GpuXidError', status: true, reason: 'xid-48' },
      { type: 'GpuXidError', status: true, reason: 'xid-48' },
    ]);
  });

  it('a report that failed is sent on a later run; the failure is logged once', async () => {
    let failures = 3;
    const p = probes({ gpu: probe([script('echo xid-79; exit 1')], 'GpuXidError') }, () => failures-- > 0);
    await vi.waitFor(() => expect(p.reports).toHaveLength(1));
    await p.stop();
    expect(p.reports).toEqual([{ type: 'GpuXidError', status: true, reason: 'xid-79' }]);
    expect(p.logs.filter((l) => l.startsWith('warn:'))).toEqual([
      'warn: probe gpu: GpuXidError not reported (the API is unreachable); retrying',
    ]);
  });

  it('a probe that cannot start reports nothing and says so once', async () => {
    const file = join(dir, 'beside.runs');
    const p = probes({
      gpu: probe([join(dir, 'no-such-probe')], 'GpuXidError'),
      // Runs as often beside it: once it ran five times, so was the broken one tried.
      beside: probe([counting(file, 0)], 'NicFlap'),
    });
    await vi.waitFor(() => expect(runs(file)).toBeGreaterThanOrEqual(5), { timeout: 5_000 });
    await p.stop();
    expect(p.reports).toEqual([]);
    expect(p.logs.filter((l) => l.includes('probe gpu'))).toEqual([
      `error: probe gpu could not start: spawn ${join(dir, 'no-such-probe')} ENOENT`,
    ]);
  });

  it('healthy from the start, the clear waits for healthyAfter (60 s until the API answered)', async () => {
    const p = probes({ gpu: probe([script('exit 0')], 'GpuXidError') });
    await vi.waitFor(() => expect(p.logs).toHaveLength(1));
    await p.stop();
    expect(p.logs).toEqual([
      'info: probe gpu: healthy; GpuXidError is reported cleared once it holds for 60 s',
    ]);
    expect(p.reports).toEqual([]);
  });
});

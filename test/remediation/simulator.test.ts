import { afterAll, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../../agent/simulator';
import { closeServer, listen } from '../../api/server';
import { createToken } from '../support/agents';
import { eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { remediateCommands, remediationsOf, operationRunResult } from '../support/remediation';

const h = useHarness();
let simulator: Simulator | undefined;
let stop: (() => Promise<void>) | undefined;
afterAll(async () => {
  await simulator?.close();
  await stop?.();
});

describe('simulated agents told to clear, fail or ignore a remediation', () => {
  it('each path ends as the spec says', async () => {
    await seedPool(h, {
      id: 'pool-sim',
      tenantId: 'acme',
      kind: 'provider',
      // Long enough for a loaded machine to deliver, ack and clear within one attempt.
      policy: { maxUnhealthy: 5, remediation: { GpuXidError: { attemptTimeout: '4s' } } },
    });
    const token = await createToken(h, { poolId: 'pool-sim' });
    const { server, port } = await listen(h.deps, 0);
    stop = () => closeServer(server);
    simulator = await createSimulator({
      api: `http://127.0.0.1:${port}`,
      token: token.secret,
      count: 3,
      heartbeatEveryMs: 500,
      pollWaitSeconds: 2,
    });
    const [clears, fails, ignores] = simulator.agents.map((a) => a.nodeId) as [string, string, string];
    simulator.remediation('clear', clears);
    simulator.remediation('fail', fails);
    simulator.remediation('ignore', ignores);
    for (const nodeId of [clears, fails, ignores])
      await simulator.reportCondition(nodeId, 'GpuXidError', true, 'xid-79');

    // Each node's one remediation, requested by its report; the result of its workflow's run.
    const result = async (nodeId: string) => {
      const [only, ...more] = await remediationsOf(h, nodeId);
      expect(more).toEqual([]);
      return operationRunResult(h, only.id);
    };
    expect(await result(clears)).toBe('succeeded');
    expect(await result(fails)).toBe('escalated');
    expect(await result(ignores)).toBe('escalated');

    expect((await eventsOf(h, clears, 'node.remediation.')).map((e) => e.type)).toEqual([
      'node.remediation.attempted',
      'node.remediation.succeeded',
    ]);
    const [failed] = await eventsOf(h, fails, 'node.remediation.escalated');
    expect(failed!.data.attempts).toEqual([
      expect.objectContaining({ outcome: 'refused', refuseReason: 'reset-accelerator failed (simulated)' }),
      expect.objectContaining({ outcome: 'refused', refuseReason: 'reboot failed (simulated)' }),
    ]);
    const [ignored] = await eventsOf(h, ignores, 'node.remediation.escalated');
    expect(
      (ignored!.data.attempts as { outcome: string; action: string }[]).map((a) => [a.action, a.outcome]),
    ).toEqual([
      ['reset-accelerator', 'timed-out'],
      ['reboot', 'timed-out'],
    ]);
    expect((await remediateCommands(h, ignores)).map((c) => c.status)).toEqual(['cancelled', 'cancelled']);
  });
});

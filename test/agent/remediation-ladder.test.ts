import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { remediateCommands } from '../support/remediation';
import { recordedLines } from '../support/scripts';
import { useAgentBench, type Machine } from './agent-process';
import {
  answeredCommands,
  machineConfig,
  machineScript,
  remediatingMachine,
  runWithConfig,
} from './remediating-machine';

/**
 * The whole path with the real agent process: a probe script finds the fault, the agent reports
 * it, the default ladder's actions run as configured scripts, and the probe decides the outcome.
 */
const h = useHarness();
const bench = useAgentBench(h);

/** Short enough for a test, long enough that a loaded machine runs both rungs in one attempt each. */
const POLICY = { remediation: { GpuXidError: { healthyAfter: '1s', attemptTimeout: '30s' } } };

/** A machine whose probe fails until `healthy` exists; its record file, its config with `actions`. */
async function faultyMachine(
  poolId: string,
  actions: (m: Machine, record: string, healthy: string) => string,
) {
  const m = await remediatingMachine(h, bench, poolId, POLICY);
  const record = join(dirname(m.dir), 'ran.log');
  const healthy = join(dirname(m.dir), 'healthy');
  const probe = machineScript(m, 'probe.sh', `[ -f '${healthy}' ] && exit 0\necho "xid-79 on GPU 3"\nexit 1`);
  const config = machineConfig(
    m,
    `actions:\n${actions(m, record, healthy)}probes:\n  gpu: { command: ["${probe}"], every: 200ms, timeout: 5s, condition: GpuXidError }\n`,
  );
  return { m, record, config };
}

const operationOf = async (id: string) => (await call(h, 'GET', `/v1/operations/${id}`)).body;

describe('remediation with the real agent climbs the ladder', () => {
  it('reset-accelerator fails, reboot runs, the probe clears: node.remediation.succeeded and the node back in service', async () => {
    const { m, record, config } = await faultyMachine('pool-e2e-climbs', (m, record, healthy) => {
      const reset = machineScript(
        m,
        'reset.sh',
        `echo "reset" >> '${record}'\necho "GPU 3 is busy" >&2\nexit 1`,
      );
      const reboot = machineScript(
        m,
        'reboot.sh',
        `echo "reboot $DRYDOCK_ACTION" >> '${record}'\ntouch '${healthy}'`,
      );
      return (
        `  reset-accelerator: { command: ["${reset}"], timeout: 20s }\n` +
        `  reboot: { command: ["${reboot}"], timeout: 20s, restarts: true }\n`
      );
    });
    const agent = await runWithConfig(bench, m, config);

    const [reset, reboot] = await answeredCommands(h, m.nodeId, 2);
    expect(reset).toMatchObject({
      action: 'reset-accelerator',
      status: 'refused',
      refuseReason: 'reset-accelerator exited 1: GPU 3 is busy',
    });
    expect(reboot).toMatchObject({ action: 'reboot', status: 'acked' });
    const [succeeded] = await eventually(async () => {
      const events = await eventsOf(h, m.nodeId, 'node.remediation.succeeded');
      return events.length > 0 ? events : undefined;
    }, 30_000);
    await agent.waitForLog(/probe gpu: reported GpuXidError cleared/);

    // Each action ran once, in ladder order; the clear came from the probe, held for healthyAfter.
    expect(recordedLines(record)).toEqual(['reset', 'reboot reboot']);
    const events = (await eventsOf(h, m.nodeId)).map((e) => e.type);
    const remediation = events.filter((type) => type.startsWith('node.remediation.'));
    expect(remediation).toEqual([
      'node.remediation.attempted',
      'node.remediation.attempted',
      'node.remediation.succeeded',
    ]);
    expect(succeeded!.data.attempts).toMatchObject([
      { attempt: 1, action: 'reset-accelerator', outcome: 'refused', refuseReason: reset!.refuseReason },
      { attempt: 2, action: 'reboot', outcome: 'cleared' },
    ]);
    const node = await readNode(h, m.nodeId);
    expect(node.maintenance).toBe(false);
    expect(node.noScheduleReasons).not.toContain('condition:GpuXidError');
    expect(node.conditions).toMatchObject([{ type: 'GpuXidError', status: false }]);
    expect((await operationOf(succeeded!.operationId!)).status).toBe('succeeded');
  });

  it('both rungs fail: maintenance, with one escalation event naming both attempts and their refusals', async () => {
    const { m, record, config } = await faultyMachine('pool-e2e-exhausted', (m, record) => {
      const reset = machineScript(
        m,
        'reset.sh',
        `echo "reset" >> '${record}'\necho "reset failed" >&2\nexit 1`,
      );
      const reboot = machineScript(
        m,
        'reboot.sh',
        `echo "reboot" >> '${record}'\necho "inhibited" >&2\nexit 4`,
      );
      return (
        `  reset-accelerator: { command: ["${reset}"], timeout: 20s }\n` +
        `  reboot: { command: ["${reboot}"], timeout: 20s }\n`
      );
    });
    await runWithConfig(bench, m, config);

    const [escalated] = await eventually(async () => {
      const events = await eventsOf(h, m.nodeId, 'node.remediation.escalated');
      return events.length > 0 ? events : undefined;
    }, 30_000);
    expect(escalated!.data.attempts).toMatchObject([
      {
        attempt: 1,
        action: 'reset-accelerator',
        outcome: 'refused',
        refuseReason: 'reset-accelerator exited 1: reset failed',
      },
      { attempt: 2, action: 'reboot', outcome: 'refused', refuseReason: 'reboot exited 4: inhibited' },
    ]);
    expect(recordedLines(record)).toEqual(['reset', 'reboot']);
    const node = await readNode(h, m.nodeId);
    expect(node.maintenance).toBe(true);
    expect(node.conditions).toMatchObject([{ type: 'GpuXidError', status: true, reason: 'xid-79 on GPU 3' }]);
    expect((await operationOf(escalated!.operationId!)).status).toBe('failed');
    // Nothing more: no third command, no second escalation, no success.
    expect(await remediateCommands(h, m.nodeId)).toHaveLength(2);
    expect(await eventsOf(h, m.nodeId, 'node.remediation.escalated')).toHaveLength(1);
    expect(await eventsOf(h, m.nodeId, 'node.remediation.succeeded')).toEqual([]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Simulator } from '../agent/simulator';
import { useCli } from './support/cli';
import { simulatedFleet, type SimulatedFleet } from './support/simulated-fleet';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);
const { drydock } = cli;
let fleet: SimulatedFleet;
let simulator: Simulator;
let nodeId: string;

beforeAll(async () => {
  fleet = await simulatedFleet(h, { poolId: 'pool-cli-cmd', count: 1, api: cli.api, heartbeatEveryMs: 500 });
  simulator = fleet.simulator;
  nodeId = fleet.nodes[0]!;
});
afterAll(() => fleet?.close());

describe('drydock nodes run / logs / commands', () => {
  it('runs an action and, with --wait, prints its output and how it ended; exit 1 when it failed', async () => {
    const ran = await drydock(['nodes', 'run', nodeId, 'diagnostics', '--reason', 'ticket 4711', '--wait']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('all GPUs healthy');
    expect(ran.stderr).toMatch(new RegExp(`diagnostics on ${nodeId}: succeeded \\(exit 0\\) in \\d+s\\n$`));

    simulator.actionOutcomes({ 'driver-upgrade': 'fail' });
    const failed = await drydock([
      'nodes',
      'run',
      nodeId,
      'driver-upgrade',
      '--reason',
      'r',
      '--wait',
      '--json',
    ]);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      status: 'failed',
      exitCode: 1,
      action: 'driver-upgrade',
    });
    simulator.actionOutcomes({});

    const logs = await drydock(['nodes', 'logs', nodeId, '--since', '3h']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('since 3h');

    const listed = await drydock(['nodes', 'commands', nodeId]);
    expect(listed.stdout.split('\n').slice(0, 1)[0]).toMatch(/^ID\s+KIND\s+ACTION\s+STATUS\s+EXIT/);
    expect(listed.stdout).toMatch(/run\s+logs\s+succeeded\s+0/);
    expect(listed.stdout).toMatch(/run\s+driver-upgrade\s+failed\s+1/);
  });

  it('queues for an offline node without --wait; show and cancel follow it', async () => {
    await simulator.pause(nodeId);
    const queued = await drydock([
      'nodes',
      'run',
      nodeId,
      'logs',
      '--arg',
      'since=2h',
      '--reason',
      'later',
      '--json',
    ]);
    expect(queued.code, queued.stderr).toBe(0);
    const command = JSON.parse(queued.stdout);
    expect(command).toMatchObject({ status: 'pending', args: { since: '2h' } });
    const shown = await drydock(['commands', 'show', command.id]);
    expect(shown.stdout).toMatch(/status:\s+pending/);
    const cancelled = await drydock(['commands', 'cancel', command.id]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toMatch(/: cancelled: cancelled by key:/);
    simulator.resume(nodeId);
  });

  it('refuses usage errors before any request', async () => {
    const node = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    await cli.refuses([
      [['nodes', 'run', node, 'diagnostics'], 'missing --reason R'],
      [['nodes', 'run', node, 'Diag!', '--reason', 'r'], 'ACTION must be an action name'],
      [['nodes', 'run', node, 'logs', '--reason', 'r', '--arg', 'since'], '--arg'],
      [
        ['nodes', 'run', node, 'logs', '--reason', 'r', '--arg', 'since=1h', '--arg', 'since=2h'],
        '--arg since is given twice',
      ],
      [['nodes', 'logs', node, '--since', 'yesterday'], '--since'],
      [['commands', 'show', 'cmd_x'], 'COMMAND must look like cmd_'],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNode } from './support/builders';
import { useCli } from './support/cli';
import { simulatedFleet, type SimulatedFleet } from './support/simulated-fleet';
import { useHarness } from './support/harness';

const h = useHarness();
const cli = useCli(h);
let fleet: SimulatedFleet;
let nodeId: string;

beforeAll(async () => {
  fleet = await simulatedFleet(h, { poolId: 'pool-cli-mnt', count: 1, api: cli.api, rebootMs: 300 });
  nodeId = fleet.nodes[0]!;
});
afterAll(() => fleet?.close());

describe('drydock nodes maintain / reboot', () => {
  it('runs a plan with --wait to its end: exit 0, the node back in service on a new boot', async () => {
    const before = await readNode(h, nodeId);
    const run = await cli.drydock([
      'nodes',
      'maintain',
      nodeId,
      '--step',
      'drain:1h',
      '--step',
      'run:driver-upgrade',
      '--step',
      'reboot',
      '--step',
      'verify:acceptance',
      '--step',
      'uncordon',
      '--healthy-after',
      '1s',
      '--reason',
      'roll 570',
      '--wait',
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const op = JSON.parse(run.stdout);
    expect(op).toMatchObject({ kind: 'maintenance', status: 'succeeded' });
    expect(op.progress.waitingFor.steps.map((s: { outcome: string }) => s.outcome)).toEqual([
      'done',
      'done',
      'done',
      'done',
      'done',
    ]);
    const after = await readNode(h, nodeId);
    expect(after.bootId).not.toBe(before.bootId);
    expect(after.cordoned).toBe(false);

    const reboot = await cli.drydock([
      'nodes',
      'reboot',
      nodeId,
      '--reason',
      'again',
      '--healthy-after',
      '1s',
      '--wait',
    ]);
    expect(reboot.code, reboot.stderr).toBe(0);
    expect(reboot.stdout).toMatch(/^maintenance op_\S+ succeeded/);
    // Without --uncordon it stays cordoned, as the operator asked.
    expect((await readNode(h, nodeId)).cordoned).toBe(true);
  });

  it('rolls a plan across the pool with pools maintain --wait; resume says what is wrong with a run that is not paused', async () => {
    const run = await cli.drydock([
      'pools',
      'maintain',
      'pool-cli-mnt',
      '--step',
      'reboot',
      '--step',
      'verify',
      '--step',
      'uncordon',
      '--healthy-after',
      '1s',
      '--max-concurrent',
      '2',
      '--reason',
      'kernel',
      '--wait',
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const op = JSON.parse(run.stdout);
    expect(op).toMatchObject({ kind: 'pool-maintenance', status: 'succeeded' });
    expect(op.progress.waitingFor.counts).toMatchObject({ succeeded: 1, failed: 0 });
    const resume = await cli.drydock(['operations', 'resume', op.id]);
    expect(resume.code).toBe(3);
    expect(resume.stderr).toContain(`operation ${op.id} is succeeded, not paused: nothing to resume`);
  });

  it('refuses usage errors before any request', async () => {
    const node = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    await cli.refuses([
      [['nodes', 'maintain', node, '--reason', 'r'], 'missing --step STEP'],
      [['nodes', 'maintain', node, '--step', 'reformat', '--reason', 'r'], '--step'],
      [['nodes', 'maintain', node, '--step', 'run', '--reason', 'r'], '--step'],
      [['nodes', 'reboot', node, '--reason', 'r', '--deadline', '2h'], '--deadline'],
      [['pools', 'maintain', 'gpu', '--reason', 'r'], 'missing --step STEP'],
      [
        ['pools', 'maintain', 'gpu', '--step', 'reboot', '--reason', 'r', '--max-failures', '0'],
        '--max-failures',
      ],
    ]);
  });
});

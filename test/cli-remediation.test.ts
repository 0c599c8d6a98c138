import { describe, expect, it } from 'vitest';
import { joinedNode } from './support/agents';
import { useCli } from './support/cli';
import { readNode, setNode } from './support/builders';
import { seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { agentOf, remediationsOf } from './support/remediation';
import { answered } from './support/witnesses';

const h = useHarness();
const cli = useCli(h);
const { drydock } = cli;

/** How many times the listening API answered the remediations route (its /metrics). */
const remediationCalls = () => answered(cli.api, { route: '/v1/nodes/:id/remediations' });

describe('drydock nodes remediate', () => {
  it('starts a remediation and, with --wait, follows it until the condition clears', async () => {
    await seedPool(h, { id: 'pool-cr', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-cr');
    const agent = agentOf(h, credential);
    // Reported with a remediation of its own (automatic); the operator's call returns that one.
    await agent.report('GpuXidError', true, 'xid-79');
    const waiting = drydock(['nodes', 'remediate', nodeId, '--condition', 'GpuXidError', '--wait', '--json']);
    await agent.nextCommand();
    // Clear the fault only once the CLI has joined the running remediation.
    await eventually(async () => (await remediationCalls()) > 0, 30_000);
    await agent.report('GpuXidError', false);
    const run = await waiting;
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'remediation', status: 'succeeded', nodeId });
  });

  it('refuses usage errors before any request', async () => {
    const node = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    await cli.refuses(
      [
        [['nodes', 'remediate', node], 'missing --condition TYPE'],
        [
          ['nodes', 'remediate', node, '--condition', 'gpu xid'],
          "--condition must be a condition type such as GpuXidError; got 'gpu xid'",
        ],
        [
          ['nodes', 'remediate', 'node_1', '--condition', 'GpuXidError'],
          "NODE must look like node_ followed by 26 lowercase ULID characters, got 'node_1'",
        ],
        [['nodes', 'remediate', node, '--condition', 'X', '--timeout', '1m'], '--timeout needs --wait'],
        [
          ['nodes', 'remediate', node, '--condition', 'X', '--idempotency-key', 'short'],
          "--idempotency-key must be 8–128 of letters, digits and . _ : -; got 'short'",
        ],
      ],
      { exact: true },
    );
  });

  it('a condition the node has not reported: recorded as the operator’s, and --wait shows each attempt', async () => {
    await seedPool(h, { id: 'pool-cr2', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-cr2');
    const agent = agentOf(h, credential);
    const waiting = drydock([
      'nodes',
      'remediate',
      nodeId,
      '--condition',
      'GpuXidError',
      '--reason',
      'dcgm diag failed',
      '--wait',
    ]);
    for (const [action, why] of [
      ['reset-accelerator', 'exit status 3: device busy'],
      ['reboot', 'exit status 1: inhibited'],
    ] as const) {
      const command = await agent.nextCommand(action);
      expect((await agent.refuse(command.id, why)).status).toBe(200);
    }
    const run = await waiting;
    // Escalated: the exit status says it failed; stdout names each rung and how it ended.
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('attempt 1 reset-accelerator: refused (exit status 3: device busy)');
    expect(run.stdout).toContain('attempt 2 reboot: refused (exit status 1: inhibited)');
    // Recorded at once, pending until a worker begins it; then followed to its end.
    expect(run.stderr).toMatch(new RegExp(`^${nodeId}: remediation op_\\w+ pending; waiting$`, 'm'));
    expect(run.stderr).toContain('failed');
    expect(await readNode(h, nodeId)).toMatchObject({
      maintenance: true,
      conditions: [expect.objectContaining({ type: 'GpuXidError', source: 'operator' })],
    });
  });

  it('--idempotency-key K: the same request again prints the same operation', async () => {
    await seedPool(h, { id: 'pool-cr3', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId } = await joinedNode(h, 'pool-cr3');
    // The condition as the node reported it, with no remediation taken up yet.
    await setNode(h, nodeId, {
      noScheduleReasons: ['condition:GpuXidError'],
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79', since: new Date().toISOString() }],
    });
    const args = ['nodes', 'remediate', nodeId, '--condition', 'GpuXidError', '--json'];
    const keyed = [...args, '--idempotency-key', 'cli-remediate-0001'];
    const first = await drydock(keyed);
    expect(first.code, first.stderr).toBe(0);
    const again = await drydock(keyed);
    expect(again.code, again.stderr).toBe(0);
    const [a, b] = [JSON.parse(first.stdout).operation, JSON.parse(again.stdout).operation];
    // Recorded and answered at once; the retry prints that operation, as it now stands.
    expect(a).toMatchObject({ kind: 'remediation', status: 'pending', idempotencyKey: 'cli-remediate-0001' });
    expect(b).toMatchObject({ id: a.id, kind: 'remediation', idempotencyKey: 'cli-remediate-0001' });
    expect((await remediationsOf(h, nodeId)).map((o) => o.id)).toEqual([a.id]);
    const other = await drydock([...keyed, '--reason', 'another']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('IDEMPOTENCY_KEY_REUSED');
  });
});

import { existsSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { nodeCommands, operations } from '../db/schema';
import { purgeWorkflowId } from '../workflows/definitions';
import { joinedMachine, runMachine, useAgentBench } from './agent/agent-process';
import { joinedNode } from './support/agents';
import { operationWhen } from './support/builders';
import { OPERATION_READ, readNode, useCli } from './support/cli';
import { allocate, call, eventsOf, seedPool } from './support/fixtures';
import { useHarness } from './support/harness';
import { answered, answeredMore } from './support/witnesses';

const h = useHarness();
const cli = useCli(h);
const bench = useAgentBench(h);
const { drydock } = cli;

const purgeOperations = async (nodeId: string) =>
  h.db.select().from(operations).where(eq(operations.nodeId, nodeId));

describe('drydock nodes purge', () => {
  it('without --yes, or with a bad line, is a usage error (exit 2) and sends nothing', async () => {
    await seedPool(h, { id: 'pool-cp-usage', tenantId: 'acme' });
    const { nodeId } = await joinedNode(h, 'pool-cp-usage');
    const unconfirmed = await drydock(['nodes', 'purge', nodeId, '--reason', 'rma']);
    expect(unconfirmed).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'error: usage: nodes purge removes the node from its machine for good; re-run with --yes\n' +
        "run 'drydock nodes purge --help' for usage\n",
    });
    await cli.refuses(
      [
        [
          ['nodes', 'purge', nodeId, '--wait'],
          'nodes purge removes the node from its machine for good; re-run with --yes',
        ],
        [
          ['nodes', 'purge', 'gpu-01', '--yes'],
          "NODE must look like node_ followed by 26 lowercase ULID characters, got 'gpu-01'",
        ],
        [['nodes', 'purge', nodeId, '--yes', '--timeout', '1m'], '--timeout needs --wait'],
        [['nodes', 'purge', nodeId, '--yes', '--if-version', '1'], "unknown flag '--if-version'"],
      ],
      { exact: true },
    );
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted' });
    expect(await purgeOperations(nodeId)).toEqual([]);
    expect(await h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, nodeId))).toEqual([]);

    const help = await drydock(['nodes', 'purge', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'Usage: drydock nodes purge NODE [--reason R] [--idempotency-key K] [--yes] [--force] [--wait] [--timeout DURATION]',
    );
  });

  it('--idempotency-key K: the same purge again prints the same operation; another reason is refused', async () => {
    await seedPool(h, { id: 'pool-cp-key', tenantId: 'acme' });
    const { nodeId } = await joinedNode(h, 'pool-cp-key');
    const args = [
      'nodes',
      'purge',
      nodeId,
      '--yes',
      '--reason',
      'sold',
      '--idempotency-key',
      'cli-purge-0001',
    ];
    const first = await drydock([...args, '--json']);
    expect(first.code, first.stderr).toBe(0);
    const again = await drydock([...args, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).operation.id).toBe(JSON.parse(first.stdout).operation.id);
    const other = await drydock([...args.slice(0, 5), 'resold', ...args.slice(6)]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('IDEMPOTENCY_KEY_REUSED');
    expect(await purgeOperations(nodeId)).toHaveLength(1);
    expect(await eventsOf(h, nodeId, 'node.purge.requested')).toHaveLength(1);
  });

  it('--yes --wait on a node whose agent runs: exit 0 once the node purged itself', async () => {
    const m = await joinedMachine(h, bench, 'pool-cp-wait');
    const agent = await runMachine(bench, m);
    // The agent runs throughout: it may take and answer the command (signed and stored by the
    // request) before a worker has begun the purge.
    const run = await drydock(['nodes', 'purge', m.nodeId, '--yes', '--wait', '--reason', 'returned']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^purge op_\w+ succeeded at \S+\n$/);
    // The 202's operation is recorded, not yet begun; no progress lines (no terminal).
    expect(run.stderr).toMatch(
      new RegExp(`^\\S+ \\(${m.nodeId}\\): purge op_\\w+ pending; waiting for the node\\n$`),
    );
    expect(await agent.exited).toBe(0);
    expect(existsSync(m.dir)).toBe(false);
    expect(existsSync(m.binary)).toBe(false);
    expect(await readNode(h, m.nodeId)).toMatchObject({ deletedAt: expect.any(String) });
    expect(await eventsOf(h, m.nodeId, 'node.purged')).toMatchObject([{ actor: 'system:purge' }]);
    const [op] = await purgeOperations(m.nodeId);
    expect(op).toMatchObject({ kind: 'purge', status: 'succeeded', reason: 'returned' });
  });

  it('--yes alone starts the purge and says so; --json prints the node and the operation', async () => {
    await seedPool(h, { id: 'pool-cp-start', tenantId: 'acme' });
    const { nodeId } = await joinedNode(h, 'pool-cp-start');
    const started = await drydock(['nodes', 'purge', nodeId, '--yes']);
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toMatch(
      new RegExp(
        `^host-\\w+ \\(${nodeId}\\): purge (op_\\w+) pending; the node deletes itself when it next asks for commands\\n$`,
      ),
    );
    const [op] = await purgeOperations(nodeId);
    expect(started.stdout).toContain(op!.id);
    await operationWhen(h, op!.id, (read) => read.progress.phase === 'waiting-for-node');
    // A purge already running is the same purge.
    const again = await drydock(['nodes', 'purge', nodeId, '--yes', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      node: { id: nodeId, provisionState: 'purging' },
      operation: { id: op!.id, kind: 'purge', status: 'running' },
    });
    expect(await purgeOperations(nodeId)).toHaveLength(1);

    // No agent answers: --timeout gives up waiting (exit 1) and the purge goes on.
    const waited = await drydock(['nodes', 'purge', nodeId, '--yes', '--wait', '--timeout', '2s']);
    expect(waited.code).toBe(1);
    // The same purge, now running: said on the first line, then where the wait gave up.
    const name = started.stdout.slice(0, started.stdout.indexOf(': purge'));
    expect(waited.stderr).toBe(
      `${name}: purge ${op!.id} running; waiting for the node\n` +
        `error: TIMEOUT: purge ${op!.id} still running after 2s; it goes on — ` +
        `follow it with: drydock operations show ${op!.id} --wait\n`,
    );

    // Deleted while someone waits: the purge ends cancelled (exit 1).
    const reads = await answered(cli.api, OPERATION_READ);
    const waiting = drydock(['nodes', 'purge', nodeId, '--yes', '--wait', '--json']);
    // It has read the running purge and read it again: it waits.
    await answeredMore(cli.api, OPERATION_READ, reads, 2);
    expect((await call(h, 'DELETE', `/v1/nodes/${nodeId}`)).status).toBe(200);
    const cancelled = await waiting;
    expect(cancelled.code).toBe(1);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ id: op!.id, status: 'cancelled' });
    expect(cancelled.stderr).toBe(`error: OPERATION_CANCELLED: purge ${op!.id} was cancelled\n`);
    expect(await h.temporal.workflow.getHandle(purgeWorkflowId(nodeId)).result()).toBe('cancelled');
  });

  it('a node holding allocations is refused (exit 3) naming them and pointing at --force; --force releases them', async () => {
    await seedPool(h, { id: 'pool-cp-held', tenantId: 'acme' });
    const { nodeId } = await joinedNode(h, 'pool-cp-held');
    const held = [await allocate(h, nodeId, 'acme'), await allocate(h, nodeId, 'globex')];
    const [first, second] = [...held].sort();
    const tenantOf = (id: string) => (id === held[0] ? 'acme' : 'globex');
    const refused = await drydock(['nodes', 'purge', nodeId, '--yes', '--reason', 'rma']);
    expect(refused).toEqual({
      code: 3,
      stdout: '',
      stderr:
        `error: INVALID_STATE: ${nodeId} still holds 2 open allocations: ${first} (${tenantOf(first!)}), ` +
        `${second} (${tenantOf(second!)}); release them, or re-run with --force to release them with the purge\n`,
    });
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted' });
    expect(await purgeOperations(nodeId)).toEqual([]);
    expect(await h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, nodeId))).toEqual([]);
    expect(await eventsOf(h, nodeId, 'allocation.force-released')).toEqual([]);

    const forced = await drydock(['nodes', 'purge', nodeId, '--yes', '--force', '--reason', 'rma', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
    const { operation } = JSON.parse(forced.stdout);
    expect(operation).toMatchObject({ kind: 'purge', status: 'pending' });
    expect(await eventsOf(h, nodeId, 'allocation.force-released')).toMatchObject(
      [first, second].map((id) => ({
        actor: 'system:purge',
        operationId: operation.id,
        data: { allocationId: id },
      })),
    );
    expect((await call(h, 'GET', `/v1/allocations?nodeId=${nodeId}&live=true`)).body.items).toEqual([]);
  });

  it('--wait stops at a refusal: the reason, exit 1, the node stays purging', async () => {
    const m = await joinedMachine(h, bench, 'pool-cp-refused');
    const link = join(dirname(m.dir), 'data-link');
    symlinkSync(m.dir, link);
    const agent = await runMachine(bench, m, link);
    const reason = `the data directory ${link} is a symbolic link; nothing deleted`;

    const run = await drydock(['nodes', 'purge', m.nodeId, '--yes', '--wait']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^purge op_\w+ running: the node refused it\n$/);
    expect(run.stderr).toMatch(
      new RegExp(
        `error: PURGE_REFUSED: \\S+ \\(${m.nodeId}\\) refused purge op_\\w+: ${escape(reason)}; it stays purging ` +
          `\\('drydock nodes delete ${m.nodeId} --yes' forgets it\\)\\n$`,
      ),
    );
    expect(await readNode(h, m.nodeId)).toMatchObject({ provisionState: 'purging', deletedAt: null });
    expect(await eventsOf(h, m.nodeId, 'node.purge.refused')).toMatchObject([{ reason }]);
    expect(existsSync(join(m.dir, 'identity.json'))).toBe(true);
    expect(agent.child.exitCode).toBeNull();

    // Asked again, the same refused purge answers at once.
    const again = await drydock(['nodes', 'purge', m.nodeId, '--yes', '--wait', '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({
      status: 'running',
      progress: { phase: 'refused', waitingFor: { refusedReason: reason } },
    });
    expect(await purgeOperations(m.nodeId)).toHaveLength(1);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

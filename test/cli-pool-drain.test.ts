import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { operations } from '../db/schema';
import { line, useCli } from './support/cli';
import { allocate, call, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();
const cli = useCli(h);
const { drydock } = cli;

async function seedRack(poolId: string, n: number, rack: string) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await seedNode(h, { poolId, tenantId: 'acme', labels: { rack } }));
  return ids;
}

/** The progress lines `--wait` writes to stderr when it is no terminal, without the elapsed time. */
const progressLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => /^pool-drain op_\S+ [\dhms]+: /.test(l))
    .map((l) => l.replace(/ [\dhms]+: /, ': '));

/** What a waiting pool drain's line says: waiting for a worker, or the counts while it drains. */
const PROGRESS = new RegExp(
  '^pool-drain op_[0-9a-z]{26}: (' +
    'Waiting for a worker: the request is recorded and starts as soon as a worker takes it\\.|' +
    'Draining: \\d+ drained, \\d+ draining, \\d+ pending, \\d+ failed; at most 2 at a time; no deadline\\.' +
    ')$',
);

describe('drydock pools drain', () => {
  it('refuses a mistyped line before anything is sent', async () => {
    await cli.refuses([
      [line('pools drain', 'pool-x'), 'missing --reason R'],
      [line('pools drain', 'pool-x', { reason: 'r', selector: 'rack' }), '--selector'],
      [line('pools drain', 'pool-x', { reason: 'r', selector: 'rack=b7,rack=b8' }), '--selector'],
      [line('pools drain', 'pool-x', { reason: 'r', 'max-concurrent': 0 }), '--max-concurrent'],
      [line('pools drain', 'pool-x', { reason: 'r', 'max-concurrent': 1001 }), '--max-concurrent'],
      [line('pools drain', 'pool-x', { reason: 'r', deadline: 'tomorrow' }), '--deadline'],
      [line('pools drain', 'pool-x', { reason: 'r', timeout: '1m' }), '--timeout'],
      [line('pools drain', 'Pool_X', { reason: 'r' }), 'POOL'],
    ]);
  });

  it('drains the selected nodes with --wait, a line per change of the counts, exit 0', async () => {
    await seedPool(h, { id: 'pool-cli', tenantId: 'acme' });
    const rack = await seedRack('pool-cli', 3, 'b7');
    const other = await seedRack('pool-cli', 1, 'c1');
    const run = await drydock(
      line('pools drain', 'pool-cli', {
        selector: 'rack=b7',
        'max-concurrent': 2,
        reason: 'driver roll-out',
        wait: true,
      }),
    );
    expect(run.code, run.stderr).toBe(0);
    // The 202's operation: recorded with its selection, not yet begun by a worker.
    expect(run.stderr).toMatch(/^pool pool-cli: pool-drain op_[0-9a-z]{26} pending, 3 nodes; waiting$/m);
    const progress = progressLines(run.stderr);
    expect(progress.length).toBeGreaterThan(0);
    for (const l of progress) expect(l).toMatch(PROGRESS);
    expect(progress.filter((l, k) => l === progress[k - 1])).toEqual([]);
    // Never more than two nodes draining at once, as the counts show it.
    for (const l of progress) {
      const draining = /(\d+) draining/.exec(l);
      if (draining) expect(Number(draining[1])).toBeLessThanOrEqual(2);
    }
    expect(run.stdout).toMatch(/^pool-cli: Succeeded: 3 drained, 0 draining, 0 pending, 0 failed\.$/m);
    expect(run.stdout).toMatch(/^pool-drain op_[0-9a-z]{26} succeeded at /m);
    const drains = await h.db
      .select()
      .from(operations)
      .where(and(eq(operations.kind, 'drain'), inArray(operations.nodeId, [...rack, ...other])));
    expect(drains.map((d) => d.nodeId).sort()).toEqual([...rack].sort());
  });

  it('exits 1 when a node did not drain, naming it and why', async () => {
    await seedPool(h, { id: 'pool-cli-fail', tenantId: 'acme' });
    const [kept, ok] = await seedRack('pool-cli-fail', 2, 'f1');
    const allocations = [await allocate(h, kept!, 'acme'), await allocate(h, ok!, 'acme')];
    const running = drydock(
      line('pools drain', 'pool-cli-fail', { 'max-concurrent': 2, reason: 'r', wait: true }),
    );
    await eventually(async () => {
      const ops = await call(h, 'GET', `/v1/operations?nodeId=${kept}&kind=drain`);
      return ops.body.items.length === 1;
    });
    await call(h, 'POST', `/v1/nodes/${kept}/uncordon`, { body: { reason: 'needed back' } });
    await call(h, 'POST', `/v1/allocations/${allocations[1]}/release`);
    const run = await running;
    expect(run.code, run.stderr).toBe(1);
    // Progress on stderr (no terminal here): a line each time the words change, never the same twice running.
    const progress = progressLines(run.stderr);
    expect(progress.length).toBeGreaterThan(0);
    for (const l of progress) expect(l).toMatch(PROGRESS);
    expect(progress.filter((l, k) => l === progress[k - 1])).toEqual([]);
    expect(run.stdout).toMatch(/^pool-cli-fail: Failed: 1 drained, 0 draining, 0 pending, 1 failed\.$/m);
    expect(run.stdout).toMatch(new RegExp(`^${kept} +CANCELLED +the node drain was cancelled`, 'm'));
    expect(run.stderr).toMatch(
      /error: OPERATION_FAILED: pool-drain op_\S+ failed: 1 of 2 nodes did not drain/,
    );
  });
});

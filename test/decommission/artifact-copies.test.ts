import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { removeCopy } from '../../db/artifacts';
import { lockNode } from '../../db/nodes';
import { operations } from '../../db/schema';
import { readNode, setNode } from '../support/builders';
import { decommissioned, execute, executeBody, preview, retiredNode } from '../support/decommission';
import { call, seedNode, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

/**
 * The "sole artifact copy" blocker (docs/lifecycle/decommission.md) fed by the copies the storage
 * layer records through the API, on the real stack: preview, execute, the worker.
 */

const h = useHarness();

const copy = (nodeId: string, artifactId: string, path = '/data/w') =>
  call(h, 'PUT', `/v1/nodes/${nodeId}/artifact-copies/${artifactId}`, { body: { path } });
const uncopy = (nodeId: string, artifactId: string) =>
  call(h, 'DELETE', `/v1/nodes/${nodeId}/artifact-copies/${artifactId}`);

async function decommissionOps(nodeId: string) {
  const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
  return ops.filter((o) => o.kind === 'decommission');
}

describe('decommission: recorded artifact copies', () => {
  it('the only copy blocks preview and execute; a copy on another node unblocks; the digest follows the copies', async () => {
    await seedPool(h, { id: 'pool-art', tenantId: 'acme' });
    const { nodeId } = await retiredNode(h, 'pool-art');
    const other = await seedNode(h, { poolId: 'pool-art', tenantId: 'acme' });
    const ready = (await preview(h, nodeId)).body;
    expect(ready).toMatchObject({ ready: true, blockers: [] });

    expect((await copy(nodeId, 'weights-70b', '/data/models/w70')).status).toBe(201);
    const blocked = (await preview(h, nodeId)).body;
    expect(blocked.ready).toBe(false);
    expect(blocked.blockers).toEqual([
      { kind: 'artifact', id: 'weights-70b', message: 'the only copy of weights-70b is at /data/models/w70' },
    ]);
    expect(blocked.nodeGeneration).toBe(ready.nodeGeneration);
    expect(blocked.dependencyDigest).not.toBe(ready.dependencyDigest);

    const refused = await execute(h, nodeId, executeBody(blocked), 'art-blocked-0001');
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'INVALID_STATE',
      details: { blockers: [expect.objectContaining({ kind: 'artifact', id: 'weights-70b' })] },
    });
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await decommissionOps(nodeId)).toEqual([]);

    // A second copy elsewhere: no longer the only one.
    expect((await copy(other, 'weights-70b')).status).toBe(201);
    const unblocked = (await preview(h, nodeId)).body;
    expect(unblocked).toMatchObject({ ready: true, blockers: [] });
    expect(unblocked.dependencyDigest).not.toBe(blocked.dependencyDigest);
    // What the blocked preview showed no longer holds: preview again.
    const stale = await execute(h, nodeId, executeBody(blocked), 'art-stale-0001');
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('CONFLICT');

    // Removing the other copy blocks it again, with the digest it had then.
    expect((await uncopy(other, 'weights-70b')).status).toBe(200);
    const again = (await preview(h, nodeId)).body;
    expect(again.blockers).toEqual(blocked.blockers);
    expect(again.dependencyDigest).toBe(blocked.dependencyDigest);
    expect((await copy(other, 'weights-70b')).status).toBe(201);

    // A copy on this node that another node holds too blocks nothing, but changes the digest.
    await copy(other, 'dataset-b');
    const before = (await preview(h, nodeId)).body;
    expect((await copy(nodeId, 'dataset-b', '/data/b')).status).toBe(201);
    const after = (await preview(h, nodeId)).body;
    expect(after).toMatchObject({ ready: true, blockers: [] });
    expect(after.dependencyDigest).not.toBe(before.dependencyDigest);

    const started = await execute(h, nodeId, executeBody(after), 'art-go-0001');
    expect(started.status).toBe(202);
    expect(await decommissioned(h, nodeId, started.body.id)).toBe('decommissioned');

    // The decommissioned node's copies count no more: the other node now holds the only ones.
    const left = (await preview(h, other)).body;
    expect(
      left.blockers.filter((b: { kind: string }) => b.kind === 'artifact').map((b: { id: string }) => b.id),
    ).toEqual(expect.arrayContaining(['weights-70b', 'dataset-b']));
  });

  it('copies on a deleted, purging or decommissioning node are not another copy; a removed one is not one at all', async () => {
    await seedPool(h, { id: 'pool-gone', tenantId: 'acme' });
    const { nodeId } = await retiredNode(h, 'pool-gone');
    await copy(nodeId, 'model-m');
    const holders = await Promise.all(
      [1, 2, 3, 4].map(() => seedNode(h, { poolId: 'pool-gone', tenantId: 'acme' })),
    );
    for (const holder of holders) expect((await copy(holder, 'model-m')).status).toBe(201);
    await setNode(h, holders[0]!, { deletedAt: new Date() });
    await setNode(h, holders[1]!, { provisionState: 'purging' });
    await setNode(h, holders[2]!, { provisionState: 'decommissioning' });
    // The fourth holds a copy that counts, until it is removed.
    expect((await preview(h, nodeId)).body).toMatchObject({ ready: true, blockers: [] });
    await uncopy(holders[3]!, 'model-m');
    expect((await preview(h, nodeId)).body.blockers).toEqual([
      expect.objectContaining({ kind: 'artifact', id: 'model-m' }),
    ]);
    // This node's own removed copy is no blocker.
    await uncopy(nodeId, 'model-m');
    expect((await preview(h, nodeId)).body).toMatchObject({ ready: true, blockers: [] });
  });

  it('an admission waits for a removal of the other copy in flight, then sees it gone and refuses', async () => {
    await seedPool(h, { id: 'pool-race', tenantId: 'acme' });
    const { nodeId } = await retiredNode(h, 'pool-race');
    const other = await seedNode(h, { poolId: 'pool-race', tenantId: 'acme' });
    await copy(nodeId, 'weights-race');
    await copy(other, 'weights-race');
    const shown = (await preview(h, nodeId)).body;
    expect(shown.ready).toBe(true);

    // The other node's copy removed in a transaction held open, as a DELETE that has not committed.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let removing!: () => void;
    const removed = new Promise<void>((resolve) => (removing = resolve));
    const held = h.db.transaction(async (tx) => {
      const node = await lockNode(tx, other);
      await removeCopy(tx, node, 'weights-race', { actor: 'test:storage' });
      removing();
      await gate;
    });
    await removed;
    let answered = false;
    const admission = execute(h, nodeId, executeBody(shown), 'art-race-0001').finally(
      () => (answered = true),
    );
    // Either the admission waits on the artifact's lock, or (wrongly) it answers without waiting.
    await eventually(async () => {
      if (answered) return true;
      const [row] = await h.db.execute<{ waiting: number }>(
        sql`select count(*)::int as waiting from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock' and query like '%pg_advisory_xact_lock%'`,
      );
      return row!.waiting > 0;
    });
    release();
    await held;
    const reply = await admission;
    expect(reply.status, JSON.stringify(reply.body)).toBe(409);
    expect(reply.body.error.code).toBe('CONFLICT');
    expect((await preview(h, nodeId)).body.blockers).toEqual([
      expect.objectContaining({ kind: 'artifact', id: 'weights-race' }),
    ]);
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await decommissionOps(nodeId)).toEqual([]);
  });
});

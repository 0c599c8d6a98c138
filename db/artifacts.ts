import { and, eq, isNull, ne, sql } from 'drizzle-orm';
import { newId } from '../domain/ids';
import type { Tx } from './client';
import { appendEvent } from './events';
import type { ChangeContext, NodeRow } from './nodes';
import { latestCopy, type ArtifactCopyRow } from './queries/artifacts';
import { artifactCopies } from './schema';

/**
 * Any fixed number: the class of the advisory locks on artifacts (the two-key form, whose keys
 * never meet the one-key locks of db/events.ts and db/migrate.ts); the second key is the
 * artifact id's `hashtext`.
 *
 * Whether a node holds the only copy of an artifact depends on rows of other nodes, which the
 * node's own row lock does not cover. So every change of an artifact's copies and every
 * decommission admission takes the artifact's lock, after its node's row lock: an admission that
 * counts another node's copy waits for a removal of that copy in flight and then sees it gone,
 * and two admissions of the two nodes holding an artifact's last copies take turns (the second
 * sees the first node leaving).
 */
const ARTIFACT_LOCK_CLASS = 720_412_002;

async function lockArtifact(tx: Tx, artifactId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${ARTIFACT_LOCK_CLASS}, hashtext(${artifactId}))`);
}

/**
 * Takes the lock of every artifact the node holds a live copy of, in the order of their keys (so
 * two admissions never wait for each other in a circle), for a decommission's admission.
 */
export async function lockArtifactsOf(tx: Tx, nodeId: string): Promise<void> {
  await tx.execute(sql`
    select count(pg_advisory_xact_lock(${ARTIFACT_LOCK_CLASS}, key))
      from (select distinct hashtext(artifact_id) as key from ${artifactCopies}
             where node_id = ${nodeId} and removed_at is null order by key) keys`);
}

/** SQL true for the node's live copies of the artifact (one, unless rows were written around the API). */
const liveOf = (nodeId: string, artifactId: string) =>
  and(
    eq(artifactCopies.nodeId, nodeId),
    eq(artifactCopies.artifactId, artifactId),
    isNull(artifactCopies.removedAt),
  );

/** Removes the node's live copies of the artifact (but the one at `keep`): the copies removed. */
function removeLive(tx: Tx, nodeId: string, artifactId: string, keep?: string) {
  return tx
    .update(artifactCopies)
    .set({ removedAt: sql`now()` })
    .where(and(liveOf(nodeId, artifactId), keep === undefined ? undefined : ne(artifactCopies.path, keep)))
    .returning();
}

/**
 * Records that `node` (locked, taking copies) holds a copy of the artifact at `path`, with its
 * `artifact.copy.recorded` event; the node's copy recorded elsewhere moves (the old one removed).
 * Already recorded there: nothing changes, `recorded: false`.
 */
export async function recordCopy(
  tx: Tx,
  node: NodeRow,
  copy: { artifactId: string; path: string },
  context: ChangeContext,
): Promise<{ copy: ArtifactCopyRow; recorded: boolean }> {
  const { artifactId, path } = copy;
  await lockArtifact(tx, artifactId);
  const live = await tx.select().from(artifactCopies).where(liveOf(node.id, artifactId));
  const same = live.find((c) => c.path === path);
  if (same && live.length === 1) return { copy: same, recorded: false };
  const moved = await removeLive(tx, node.id, artifactId, path);
  // A place recorded before and removed since is the same row again (its place is unique).
  const [recorded] = same
    ? [same]
    : await tx
        .insert(artifactCopies)
        .values({ id: newId('art'), artifactId, nodeId: node.id, path })
        .onConflictDoUpdate({
          target: [artifactCopies.artifactId, artifactCopies.nodeId, artifactCopies.path],
          set: { removedAt: null, createdAt: sql`now()` },
        })
        .returning();
  await appendEvent(tx, {
    type: 'artifact.copy.recorded',
    nodeId: node.id,
    tenantId: node.tenantId,
    ...context,
    data: {
      copyId: recorded!.id,
      artifactId,
      path,
      ...(moved[0] ? { previousPath: moved[0].path } : {}),
    },
  });
  return { copy: recorded!, recorded: true };
}

/**
 * Removes the node's (locked) copy of the artifact, with its `artifact.copy.removed` event. One
 * removed before: that copy, unchanged (`removed: false`); none ever recorded: undefined.
 */
export async function removeCopy(
  tx: Tx,
  node: NodeRow,
  artifactId: string,
  context: ChangeContext,
): Promise<{ copy: ArtifactCopyRow; removed: boolean } | undefined> {
  await lockArtifact(tx, artifactId);
  const removed = await removeLive(tx, node.id, artifactId);
  for (const copy of removed) {
    await appendEvent(tx, {
      type: 'artifact.copy.removed',
      nodeId: node.id,
      tenantId: node.tenantId,
      ...context,
      data: { copyId: copy.id, artifactId, path: copy.path },
    });
  }
  if (removed[0]) return { copy: removed[0], removed: true };
  const earlier = await latestCopy(tx, node.id, artifactId);
  return earlier && { copy: earlier, removed: false };
}

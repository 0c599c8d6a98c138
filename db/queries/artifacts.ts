import { and, asc, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { artifactCopies, nodes } from '../schema';
import { isoOrNull } from './dates';
import { visibleTo } from './nodes';

export type ArtifactCopyRow = typeof artifactCopies.$inferSelect;

/** The artifact copy object of the API (docs/api.md, Artifact copies). */
export function artifactCopyView(copy: ArtifactCopyRow) {
  return {
    id: copy.id,
    artifactId: copy.artifactId,
    nodeId: copy.nodeId,
    path: copy.path,
    createdAt: copy.createdAt.toISOString(),
    removedAt: isoOrNull(copy.removedAt),
  };
}
export type ArtifactCopyView = ReturnType<typeof artifactCopyView>;

/** The node's copy of the artifact: the live one if there is one, else the one removed last. */
export async function latestCopy(
  db: DbOrTx,
  nodeId: string,
  artifactId: string,
): Promise<ArtifactCopyRow | undefined> {
  const [copy] = await db
    .select()
    .from(artifactCopies)
    .where(and(eq(artifactCopies.nodeId, nodeId), eq(artifactCopies.artifactId, artifactId)))
    .orderBy(sql`${artifactCopies.removedAt} desc nulls first`, sql`${artifactCopies.id} desc`)
    .limit(1);
  return copy;
}

/**
 * A page of live copies (not removed), in `order`, after the copy `after` (the last of the page
 * before: the page goes on after its key). `limit` rows at most.
 */
async function copyPage(
  db: DbOrTx,
  q: { where: SQL[]; order: 'artifact' | 'node'; after?: string; limit: number },
): Promise<ArtifactCopyView[]> {
  const key = q.order === 'artifact' ? artifactCopies.artifactId : artifactCopies.nodeId;
  const column = sql.raw(q.order === 'artifact' ? 'prev.artifact_id' : 'prev.node_id');
  const rows = await db
    .select({ copy: artifactCopies })
    .from(artifactCopies)
    .innerJoin(nodes, eq(nodes.id, artifactCopies.nodeId))
    .where(
      and(
        isNull(artifactCopies.removedAt),
        ...q.where,
        // The cursor's own row gives the key: copies are never deleted, only removed.
        q.after
          ? sql`(${key}, ${artifactCopies.id}) > (select ${column}, prev.id from artifact_copies prev where prev.id = ${q.after})`
          : undefined,
      ),
    )
    .orderBy(asc(key), asc(artifactCopies.id))
    .limit(q.limit);
  return rows.map((r) => artifactCopyView(r.copy));
}

/** The live copies recorded on a node (one the caller sees), by artifact id. */
export function listNodeCopies(
  db: DbOrTx,
  nodeId: string,
  q: { after?: string; limit: number },
): Promise<ArtifactCopyView[]> {
  return copyPage(db, { where: [eq(artifactCopies.nodeId, nodeId)], order: 'artifact', ...q });
}

/** The live copies of an artifact on the nodes the principal sees, by node id. */
export function listArtifactCopies(
  db: DbOrTx,
  principal: Principal,
  artifactId: string,
  q: { after?: string; limit: number },
): Promise<ArtifactCopyView[]> {
  return copyPage(db, {
    where: [eq(artifactCopies.artifactId, artifactId), visibleTo(principal)],
    order: 'node',
    ...q,
  });
}

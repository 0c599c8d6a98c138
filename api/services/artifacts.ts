import { copyRefusal } from '../../domain/artifacts';
import { DrydockError } from '../../domain/errors';
import { actorOf, type Principal } from '../../domain/principal';
import { recordCopy, removeCopy } from '../../db/artifacts';
import { lockNode } from '../../db/nodes';
import type { ArtifactCopyRow } from '../../db/queries/artifacts';
import type { AppDeps } from '../env';

type Deps = Pick<AppDeps, 'db'>;

/** One node's copy of one artifact, named by who asks and why. */
export interface CopyTarget {
  nodeId: string;
  artifactId: string;
  principal: Principal;
  reason?: string | null;
}

/**
 * Records the node's copy of an artifact at `path`, in one transaction: the node locked (NOT_FOUND
 * when the caller cannot see it, FORBIDDEN when it sees it only through a grant), refused
 * (INVALID_STATE) when it takes no new copy, then the copy and its event. `recorded: false`: it was
 * already recorded there, and nothing changed.
 */
export function recordArtifactCopy(
  deps: Deps,
  target: CopyTarget & { path: string },
): Promise<{ copy: ArtifactCopyRow; recorded: boolean }> {
  return deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, target.nodeId, target.principal);
    const refusal = copyRefusal(node);
    if (refusal) {
      throw new DrydockError('INVALID_STATE', `${refusal}: it takes no new artifact copy`, {
        provisionState: node.provisionState,
        deleted: node.deletedAt !== null,
      });
    }
    return recordCopy(
      tx,
      node,
      { artifactId: target.artifactId, path: target.path },
      { actor: actorOf(target.principal), reason: target.reason ?? null },
    );
  });
}

/**
 * Removes the node's copy of an artifact, in one transaction, whatever the node's state (a copy
 * on a node on its way out counts for nothing, but the storage layer may still say it is gone).
 * Removed before: that copy, unchanged; never recorded on the node: NOT_FOUND.
 */
export async function removeArtifactCopy(
  deps: Deps,
  target: CopyTarget,
): Promise<{ copy: ArtifactCopyRow; removed: boolean }> {
  const { nodeId, artifactId } = target;
  const done = await deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, nodeId, target.principal);
    return removeCopy(tx, node, artifactId, {
      actor: actorOf(target.principal),
      reason: target.reason ?? null,
    });
  });
  if (!done) {
    throw new DrydockError('NOT_FOUND', `node ${nodeId} has no copy of ${artifactId} recorded`, {
      nodeId,
      artifactId,
    });
  }
  return done;
}

import { ApiError, type ApiClient, type Schemas } from '@drydock/client';

type Operation = Schemas['Operation'];
type RollingProgress = Extract<Schemas['OperationProgress'], { kind: 'pool-maintenance' }>;
export type RollingWaitingFor = NonNullable<RollingProgress['waitingFor']>;

/** How many node maintenances a rolling maintenance's page reads at once. */
export const CHILD_READS_AT_ONCE = 8;

/** A rolling maintenance as its page shows it: the operation, and its node maintenances by id. */
export interface Rolling {
  operation: Operation;
  /** Each listed node's maintenance (`GET /v1/operations/{id}`), by operation id. */
  children: Map<string, Operation>;
}

/** The rolling maintenance's progress (`pool-maintenance`), or null for another kind or none yet. */
export function rollingOf(operation: Operation): RollingWaitingFor | null {
  const progress = operation.progress as RollingProgress;
  return progress.kind === 'pool-maintenance' ? progress.waitingFor : null;
}

/**
 * The node maintenances a rolling maintenance lists (its progress names each node's operation; the
 * list of operations carries no progress, so each is read on its own): only those, at most
 * `CHILD_READS_AT_ONCE` at a time. One the key may not read (or gone) is left out: its row shows
 * the plan's steps as not known.
 */
export async function readRolling(api: ApiClient, operation: Operation): Promise<Rolling> {
  const ids = (rollingOf(operation)?.nodes ?? []).flatMap((n) => (n.operationId ? [n.operationId] : []));
  const children = new Map<string, Operation>();
  for (let i = 0; i < ids.length; i += CHILD_READS_AT_ONCE) {
    const batch = await Promise.all(
      ids.slice(i, i + CHILD_READS_AT_ONCE).map((id) =>
        api.GET('/v1/operations/{id}', { params: { path: { id } } }).catch((error: unknown) => {
          if (error instanceof ApiError && error.status !== 401) return null;
          throw error;
        }),
      ),
    );
    for (const child of batch) if (child) children.set(child.id, child);
  }
  return { operation, children };
}

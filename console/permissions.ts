import type { Schemas } from '@drydock/client';
import { controlRefusal } from '../domain/node';
import type { Session } from './sessions';

type Node = Schemas['Node'];
type Pool = Schemas['Pool'];
type ActionName = Schemas['Caller']['actions'][number];

/**
 * Whether this key may use a control that `needs` an action (or an operator key) on this node as it
 * is now: never on a deleted or retired node; a tenant key only with the action and only on its own
 * tenant's node (a grant of the pool is for placement, not for controls), as the API decides.
 */
export function mayUse(node: Node, session: Session, needs: ActionName | 'operator'): boolean {
  const { caller } = session;
  if (refusalOf(node) !== null) return false;
  if (caller.kind === 'operator') return true;
  return needs !== 'operator' && caller.actions.includes(needs) && node.tenantId === caller.tenantId;
}

/** Why no control is offered on this node at all (deleted, retired), or null. */
export function refusalOf(node: Node): string | null {
  return controlRefusal({
    provisionState: node.provisionState,
    deletedAt: node.deletedAt ? new Date(node.deletedAt) : null,
  });
}

/**
 * Whether this key may use a pool's control that `needs` an action (or an operator key): a tenant
 * key only with the action and only on its own tenant's pool, as the API decides. `pool` null: a
 * control on no pool in particular (an operation's resume and cancel), for operator keys only.
 */
export function mayUseOnPool(
  pool: Pick<Pool, 'tenantId'> | null,
  session: Session,
  needs: ActionName | 'operator',
): boolean {
  const { caller } = session;
  if (caller.kind === 'operator') return true;
  return (
    needs !== 'operator' &&
    pool !== null &&
    caller.actions.includes(needs) &&
    pool.tenantId === caller.tenantId
  );
}

import type { Inventory } from '../../domain/inventory';
import { recordInventory, type InventoryChange } from '../../db/inventory';
import { lockNode, type NodeRow } from '../../db/nodes';
import type { AppDeps } from '../env';

/**
 * The agent's discovery reported the machine's inventory (`PUT /v1/agent/inventory`): recorded
 * with its labels and `node.inventory.changed` in one transaction, or nothing when it is the
 * inventory the node has already.
 */
export async function reportInventory(
  deps: Pick<AppDeps, 'db'>,
  node: NodeRow,
  inventory: Inventory,
): Promise<InventoryChange> {
  return deps.db.transaction(async (tx) => {
    const locked = await lockNode(tx, node.id);
    return recordInventory(tx, locked, inventory, { event: true, actor: `node:${node.id}` });
  });
}

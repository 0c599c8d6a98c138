import { and, eq, inArray, notInArray } from 'drizzle-orm';
import { newId } from '../domain/ids';
import { inventoryLabels, type Inventory } from '../domain/inventory';
import { sameJson } from '../domain/pool';
import type { Tx } from './client';
import { applyNodeChange, type NodeRow } from './nodes';
import { accelerators, inventoryCurrent, inventorySnapshots, nodeLabels, storageRoots } from './schema';

/** What a report changed: whether anything did, and the `inventory` labels it set and removed. */
export interface InventoryChange {
  changed: boolean;
  labels: { set: Record<string, string>; removed: string[] };
}

/**
 * Records a node's inventory in the caller's transaction, the node locked by the caller: a
 * snapshot (history) and the current inventory; accelerators by serial and storage roots by path
 * (one no longer reported is kept, `decommissioned` or `unavailable`); and the `inventory` labels
 * (domain/inventory.ts), replacing an operator label of the same key. The same inventory as the
 * current one changes nothing. A node that existed before (`event`) gets a version and
 * `node.inventory.changed`; a joining node is new, and its join is the event.
 */
export async function recordInventory(
  tx: Tx,
  node: NodeRow,
  inventory: Inventory,
  options: { event: false } | { event: true; actor: string },
): Promise<InventoryChange> {
  const [current] = await tx.select().from(inventoryCurrent).where(eq(inventoryCurrent.nodeId, node.id));
  if (current && sameJson(current.data, inventory))
    return { changed: false, labels: { set: {}, removed: [] } };
  const data = inventory as unknown as Record<string, unknown>;
  await tx.insert(inventorySnapshots).values({ id: newId('inv'), nodeId: node.id, data });
  await tx
    .insert(inventoryCurrent)
    .values({ nodeId: node.id, data })
    .onConflictDoUpdate({ target: inventoryCurrent.nodeId, set: { data, updatedAt: new Date() } });
  await writeAccelerators(tx, node.id, inventory.accelerators);
  await writeStorageRoots(tx, node.id, inventory.storageRoots);
  const labels = await writeLabels(tx, node.id, inventoryLabels(inventory));
  if (options.event) {
    await applyNodeChange(
      tx,
      node,
      {
        patch: {},
        event: {
          type: 'node.inventory.changed',
          data: {
            ...labels,
            accelerators: inventory.accelerators.length,
            storageRoots: inventory.storageRoots.length,
          },
        },
      },
      { actor: options.actor },
    );
  }
  return { changed: true, labels };
}

async function writeAccelerators(tx: Tx, nodeId: string, reported: Inventory['accelerators']) {
  const serials = reported.map((a) => a.serial);
  await tx
    .update(accelerators)
    .set({ state: 'decommissioned', updatedAt: new Date() })
    .where(
      and(
        eq(accelerators.nodeId, nodeId),
        eq(accelerators.state, 'active'),
        serials.length > 0 ? notInArray(accelerators.serial, serials) : undefined,
      ),
    );
  const known = await tx
    .select()
    .from(accelerators)
    .where(and(eq(accelerators.nodeId, nodeId), eq(accelerators.state, 'active')));
  for (const accelerator of reported) {
    const row = known.find((k) => k.serial === accelerator.serial);
    if (!row) {
      await tx.insert(accelerators).values({ id: newId('acc'), nodeId, ...pick(accelerator) });
    } else if (row.model !== accelerator.model) {
      await tx
        .update(accelerators)
        .set({ model: accelerator.model, updatedAt: new Date() })
        .where(eq(accelerators.id, row.id));
    }
  }
}

const pick = (a: Inventory['accelerators'][number]) => ({ model: a.model, serial: a.serial });

async function writeStorageRoots(tx: Tx, nodeId: string, reported: Inventory['storageRoots']) {
  const paths = reported.map((s) => s.path);
  await tx
    .update(storageRoots)
    .set({ state: 'unavailable', updatedAt: new Date() })
    .where(
      and(
        eq(storageRoots.nodeId, nodeId),
        paths.length > 0 ? notInArray(storageRoots.path, paths) : undefined,
      ),
    );
  const known = await tx.select().from(storageRoots).where(eq(storageRoots.nodeId, nodeId));
  for (const root of reported) {
    const row = known.find((k) => k.path === root.path);
    if (!row) {
      await tx.insert(storageRoots).values({ id: newId('sr'), nodeId, path: root.path, bytes: root.bytes });
    } else if (row.bytes !== root.bytes || row.state === 'unavailable') {
      await tx
        .update(storageRoots)
        .set({ bytes: root.bytes, state: 'writable', updatedAt: new Date() })
        .where(eq(storageRoots.id, row.id));
    }
  }
}

/** Sets the `inventory` labels to `wanted`: what it set (new or other values) and removed. */
async function writeLabels(
  tx: Tx,
  nodeId: string,
  wanted: Record<string, string>,
): Promise<InventoryChange['labels']> {
  const had = await tx.select().from(nodeLabels).where(eq(nodeLabels.nodeId, nodeId));
  const removed = had
    .filter((l) => l.source === 'inventory' && !Object.hasOwn(wanted, l.key))
    .map((l) => l.key);
  if (removed.length > 0) {
    await tx.delete(nodeLabels).where(and(eq(nodeLabels.nodeId, nodeId), inArray(nodeLabels.key, removed)));
  }
  const set = Object.fromEntries(
    Object.entries(wanted).filter(([key, value]) => {
      const label = had.find((l) => l.key === key);
      return label?.value !== value || label.source !== 'inventory';
    }),
  );
  for (const [key, value] of Object.entries(set)) {
    await tx
      .insert(nodeLabels)
      .values({ nodeId, key, value, source: 'inventory' })
      .onConflictDoUpdate({
        target: [nodeLabels.nodeId, nodeLabels.key],
        set: { value, source: 'inventory', updatedAt: new Date() },
      });
  }
  return { set, removed };
}

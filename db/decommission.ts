import { and, eq, inArray, isNull, ne, notExists, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import {
  confirmationIdentities,
  decommissionBlockers,
  dependencyDigest,
  type DecommissionDependencies,
} from '../domain/decommission';
import { isOpen } from './allocations';
import type { DbOrTx } from './client';
import type { NodeRow } from './nodes';
import {
  accelerators,
  allocations,
  artifactCopies,
  inventoryCurrent,
  nodeCertificates,
  nodeCredentials,
  nodeHistoryCounts,
  operations,
  schedulerEntries,
  storageRoots,
  telemetryCurrent,
} from './schema';

const otherCopies = alias(artifactCopies, 'other_copies');

/**
 * Everything a decommission decision depends on. Every query is by node id on an index and reads
 * live rows only (open allocations, live credentials, current rows): never the node's history.
 */
export async function loadDependencies(db: DbOrTx, node: NodeRow): Promise<DecommissionDependencies> {
  const id = node.id;
  const [open, sole, running, credentials, certificates, accs, roots, scheduler, telemetry, inventory] =
    await Promise.all([
      db
        .select({ id: allocations.id, kind: allocations.kind, endsAt: allocations.endsAt })
        .from(allocations)
        .where(and(eq(allocations.nodeId, id), isOpen)),
      db
        .select({ id: artifactCopies.id, artifactId: artifactCopies.artifactId, path: artifactCopies.path })
        .from(artifactCopies)
        .where(
          and(
            eq(artifactCopies.nodeId, id),
            isNull(artifactCopies.removedAt),
            notExists(
              db
                .select({ one: sql`1` })
                .from(otherCopies)
                .where(
                  and(
                    eq(otherCopies.artifactId, artifactCopies.artifactId),
                    ne(otherCopies.nodeId, id),
                    isNull(otherCopies.removedAt),
                  ),
                ),
            ),
          ),
        ),
      db
        .select({ id: operations.id, kind: operations.kind })
        .from(operations)
        .where(and(eq(operations.nodeId, id), inArray(operations.status, ['pending', 'running']))),
      db
        .select({ id: nodeCredentials.id })
        .from(nodeCredentials)
        .where(and(eq(nodeCredentials.nodeId, id), isNull(nodeCredentials.revokedAt))),
      db
        .select({ serial: nodeCertificates.serial })
        .from(nodeCertificates)
        .where(and(eq(nodeCertificates.nodeId, id), isNull(nodeCertificates.revokedAt))),
      db
        .select({ id: accelerators.id, state: accelerators.state })
        .from(accelerators)
        .where(eq(accelerators.nodeId, id)),
      db
        .select({ id: storageRoots.id, state: storageRoots.state })
        .from(storageRoots)
        .where(eq(storageRoots.nodeId, id)),
      db
        .select({ id: schedulerEntries.nodeId })
        .from(schedulerEntries)
        .where(eq(schedulerEntries.nodeId, id)),
      db
        .select({ id: telemetryCurrent.nodeId })
        .from(telemetryCurrent)
        .where(eq(telemetryCurrent.nodeId, id)),
      db
        .select({ id: inventoryCurrent.nodeId })
        .from(inventoryCurrent)
        .where(eq(inventoryCurrent.nodeId, id)),
    ]);
  return {
    node: {
      id,
      hostname: node.hostname,
      displayName: node.displayName,
      version: node.version,
      provisionState: node.provisionState,
      liveness: node.liveness,
      access: node.access,
      cordoned: node.cordoned,
      deleted: node.deletedAt !== null,
      identityGeneration: node.identityGeneration,
    },
    openAllocations: open.map((a) => ({ id: a.id, kind: a.kind, endsAt: a.endsAt?.toISOString() ?? null })),
    soleArtifactCopies: sole,
    runningOperations: running,
    credentials: credentials.map((c) => c.id),
    certificates: certificates.map((c) => c.serial),
    accelerators: accs,
    storageRoots: roots,
    current: { scheduler: scheduler.length, telemetry: telemetry.length, inventory: inventory.length },
  };
}

/** The preview of spec/decommission.md, from dependencies and the node's history counters. */
export async function previewOf(db: DbOrTx, node: NodeRow) {
  const deps = await loadDependencies(db, node);
  const [history] = await db.select().from(nodeHistoryCounts).where(eq(nodeHistoryCounts.nodeId, node.id));
  const blockers = decommissionBlockers(deps);
  return {
    nodeId: node.id,
    hostname: node.hostname,
    displayName: node.displayName,
    confirmationIdentities: confirmationIdentities(deps.node),
    nodeGeneration: node.version,
    dependencyDigest: dependencyDigest(deps),
    ready: blockers.length === 0,
    blockers,
    cleanup: [
      { kind: 'credentials', count: deps.credentials.length },
      { kind: 'certificates', count: deps.certificates.length },
      { kind: 'accelerators', count: deps.accelerators.filter((a) => a.state !== 'decommissioned').length },
      { kind: 'storage-roots', count: deps.storageRoots.filter((s) => s.state === 'writable').length },
      { kind: 'scheduler-rows', count: deps.current.scheduler },
      { kind: 'telemetry-rows', count: deps.current.telemetry },
      { kind: 'inventory-current-rows', count: deps.current.inventory },
    ],
    retained: [
      { kind: 'events', count: history?.events ?? 0 },
      { kind: 'allocations', count: history?.allocations ?? 0 },
      { kind: 'operations', count: history?.operations ?? 0 },
      { kind: 'inventory-snapshots', count: history?.inventorySnapshots ?? 0 },
    ],
    deps,
  };
}

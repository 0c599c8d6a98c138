import { sql } from 'drizzle-orm';
import { COPYLESS_STATES } from '../../domain/artifacts';
import {
  confirmationIdentities,
  decommissionBlockers,
  dependencyDigest,
  type DecommissionDependencies,
} from '../../domain/decommission';
import { isOpen } from './allocations';
import type { DbOrTx } from '../client';
import type { NodeRow } from '../nodes';
import { allocations } from '../schema';

/** The provision states whose nodes' copies count for no other node, as SQL literals. */
const copylessStates = sql.raw(`(${COPYLESS_STATES.map((state) => `'${state}'`).join(', ')})`);

/** What one read of the database gives for a decommission decision. */
interface DecommissionInputs {
  deps: DecommissionDependencies;
  history: { events: number; allocations: number; operations: number; inventorySnapshots: number } | null;
}

interface InputsRow {
  openAllocations: { id: string; kind: string; endsAtMs: number | null }[];
  artifactCopies: DecommissionDependencies['artifactCopies'];
  soleArtifactCopies: DecommissionDependencies['soleArtifactCopies'];
  runningOperations: DecommissionDependencies['runningOperations'];
  credentials: string[];
  certificates: string[];
  accelerators: DecommissionDependencies['accelerators'];
  storageRoots: DecommissionDependencies['storageRoots'];
  scheduler: number;
  telemetry: number;
  inventory: number;
  history: DecommissionInputs['history'];
}

/**
 * Everything a decommission decision depends on, and the node's history counters, in one
 * statement (one snapshot, one round trip: eleven separate queries cost a preview about 2.5× the
 * CPU, see bench/preview.ts). Every subquery is by node id on an index and reads live rows only
 * (open allocations, live credentials, current rows): never the node's history.
 */
async function readInputs(db: DbOrTx, node: NodeRow): Promise<DecommissionInputs> {
  const id = node.id;
  // One select statement, written in SQL for its subqueries: a read like the others here.
  // eslint-disable-next-line no-restricted-syntax
  const [row] = (await db.execute(sql`
    select
      (select coalesce(json_agg(json_build_object(
                'id', id, 'kind', kind,
                'endsAtMs', floor(extract(epoch from ends_at) * 1000)::bigint)), '[]')
         from ${allocations} where node_id = ${id} and ${isOpen}) as "openAllocations",
      (select coalesce(json_agg(json_build_object('id', id, 'artifactId', artifact_id, 'path', path)), '[]')
         from artifact_copies where node_id = ${id} and removed_at is null) as "artifactCopies",
      -- Another copy counts only while it is recorded (not removed) on a node that keeps its data:
      -- not deleted, not on its way out (COPYLESS_STATES). A copy on a decommissioned node would
      -- otherwise let the last live copy go too.
      (select coalesce(json_agg(json_build_object('id', c.id, 'artifactId', c.artifact_id, 'path', c.path)), '[]')
         from artifact_copies c
        where c.node_id = ${id} and c.removed_at is null
          and not exists (select 1 from artifact_copies other join nodes holder on holder.id = other.node_id
                           where other.artifact_id = c.artifact_id and other.node_id <> ${id}
                             and other.removed_at is null and holder.deleted_at is null
                             and holder.provision_state not in ${copylessStates})) as "soleArtifactCopies",
      -- Literal statuses, as in the partial index operations_one_open_per_node_idx: a plan made
      -- for parameters cannot prove that index's predicate and would read every operation the
      -- node ever had (the generic plan of a prepared statement does exactly that).
      (select coalesce(json_agg(json_build_object('id', id, 'kind', kind)), '[]')
         from operations where node_id = ${id} and status in ('pending', 'running')) as "runningOperations",
      (select coalesce(json_agg(id), '[]')
         from node_credentials where node_id = ${id} and revoked_at is null) as "credentials",
      (select coalesce(json_agg(serial), '[]')
         from node_certificates where node_id = ${id} and revoked_at is null) as "certificates",
      (select coalesce(json_agg(json_build_object('id', id, 'state', state)), '[]')
         from accelerators where node_id = ${id}) as "accelerators",
      (select coalesce(json_agg(json_build_object('id', id, 'state', state)), '[]')
         from storage_roots where node_id = ${id}) as "storageRoots",
      (select count(*)::int from scheduler_entries where node_id = ${id}) as "scheduler",
      (select count(*)::int from telemetry_current where node_id = ${id}) as "telemetry",
      (select count(*)::int from inventory_current where node_id = ${id}) as "inventory",
      (select json_build_object('events', events, 'allocations', allocations, 'operations', operations,
                                'inventorySnapshots', inventory_snapshots)
         from node_history_counts where node_id = ${id}) as "history"
  `)) as unknown as InputsRow[];
  const r = row!;
  return {
    deps: {
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
      // Whole milliseconds, as a Date holds them: the same ISO string the digest always hashed.
      openAllocations: r.openAllocations.map((a) => ({
        id: a.id,
        kind: a.kind,
        endsAt: a.endsAtMs === null ? null : new Date(a.endsAtMs).toISOString(),
      })),
      artifactCopies: r.artifactCopies,
      soleArtifactCopies: r.soleArtifactCopies,
      runningOperations: r.runningOperations,
      credentials: r.credentials,
      certificates: r.certificates,
      accelerators: r.accelerators,
      storageRoots: r.storageRoots,
      current: { scheduler: r.scheduler, telemetry: r.telemetry, inventory: r.inventory },
    },
    history: r.history,
  };
}

/** Everything a decommission decision depends on (see readInputs). */
export async function loadDependencies(db: DbOrTx, node: NodeRow): Promise<DecommissionDependencies> {
  return (await readInputs(db, node)).deps;
}

/** The preview of docs/lifecycle/decommission.md, from dependencies and the node's history counters. */
export async function previewOf(db: DbOrTx, node: NodeRow) {
  const { deps, history } = await readInputs(db, node);
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

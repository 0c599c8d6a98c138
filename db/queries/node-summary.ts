import { and, asc, inArray, sql } from 'drizzle-orm';
import { NODE_COUNTS, nodeStateOf, type NodeCountName, type NodeState } from '../../domain/node-state';
import type { Principal } from '../../domain/principal';
import type { DbOrTx } from '../client';
import { nodeLabels, nodes } from '../schema';
import { nodeFilters, type NodeFilter } from './nodes';

/** A node as the summary places it: enough to draw and name it. */
export interface NodeStub {
  id: string;
  hostname: string;
  poolId: string | null;
  state: NodeState;
}

export interface NodeSummary {
  total: number;
  counts: Record<NodeCountName, number>;
  groupBy: string;
  /** Every label key the nodes carry, in order: what else they can be grouped by. */
  labelKeys: string[];
  /** One group per value of the label `groupBy`, in order, the nodes without it last (value null). */
  groups: { value: string | null; nodes: NodeStub[] }[];
}

/**
 * The nodes the principal sees that match, counted by state and grouped by their value of a
 * label: two reads (the nodes' state fields with that label's value, and the label keys), no
 * whole node read. Groups and nodes in the order people read names (`b7` before `b10`).
 */
export async function summarizeNodes(
  db: DbOrTx,
  principal: Principal,
  q: Omit<NodeFilter, 'order' | 'from' | 'limit'> & { groupBy: string },
): Promise<NodeSummary> {
  const where = and(...nodeFilters(principal, q));
  const group = sql<
    string | null
  >`(select ${nodeLabels.value} from ${nodeLabels} where ${nodeLabels.nodeId} = ${nodes.id} and ${nodeLabels.key} = ${q.groupBy})`;
  const [rows, keys] = await Promise.all([
    db
      .select({
        id: nodes.id,
        hostname: nodes.hostname,
        poolId: nodes.poolId,
        liveness: nodes.liveness,
        access: nodes.access,
        provisionState: nodes.provisionState,
        cordoned: nodes.cordoned,
        maintenance: nodes.maintenance,
        noScheduleReasons: nodes.noScheduleReasons,
        group,
      })
      .from(nodes)
      .where(where)
      .orderBy(
        sql`${group} collate "natural" nulls last`,
        sql`${nodes.hostname} collate "natural"`,
        asc(nodes.id),
      ),
    db
      .selectDistinct({ key: nodeLabels.key })
      .from(nodeLabels)
      .where(inArray(nodeLabels.nodeId, db.select({ id: nodes.id }).from(nodes).where(where)))
      .orderBy(asc(nodeLabels.key)),
  ]);
  const counts = Object.fromEntries(
    NODE_COUNTS.map(({ name, has }) => [name, rows.filter(has).length]),
  ) as Record<NodeCountName, number>;
  const groups: NodeSummary['groups'] = [];
  for (const row of rows) {
    const stub = { id: row.id, hostname: row.hostname, poolId: row.poolId, state: nodeStateOf(row) };
    const last = groups[groups.length - 1];
    if (last && last.value === row.group) last.nodes.push(stub);
    else groups.push({ value: row.group, nodes: [stub] });
  }
  return { total: rows.length, counts, groupBy: q.groupBy, labelKeys: keys.map((k) => k.key), groups };
}

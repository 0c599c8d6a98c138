import type { Schemas } from '@drydock/client';
import { CAPACITY_BUCKETS } from '../../domain/capacity';
import { ACCESS, LIVENESS, PROVISION_STATES } from '../../domain/node';
import type { PoolWithCapacity } from '../context';
import { Csrf, Layout, Table } from '../layout';
import type { Flash, Session } from '../sessions';

type Node = Schemas['Node'];

/** The `GET /v1/nodes` filters the fleet page offers, as the page's own query carries them. */
export const FLEET_FILTERS = [
  'hostname',
  'selector',
  'poolId',
  'tenantId',
  'siteId',
  'provisionState',
  'access',
  'liveness',
  'cordoned',
] as const;
export type FleetFilters = Partial<Record<(typeof FLEET_FILTERS)[number], string>>;

export interface FleetView {
  session: Session;
  flash?: Flash;
  filters: FleetFilters;
  /** The page of nodes, or the API's refusal of the filters. */
  nodes: { items: Node[]; nextCursor: string | null } | { problem: string };
  pools: PoolWithCapacity[];
  pending: Node[];
}

export function FleetPage(view: FleetView) {
  const operator = view.session.caller.kind === 'operator';
  return (
    <Layout title="Fleet" session={view.session} flash={view.flash}>
      <h1>Fleet</h1>
      <Filters filters={view.filters} pools={view.pools.map((p) => p.pool.id)} />
      {'problem' in view.nodes ? (
        <p class="flash error" role="alert">
          {view.nodes.problem}
        </p>
      ) : (
        <>
          <NodeTable nodes={view.nodes.items} />
          {view.nodes.nextCursor && (
            <p>
              <a href={`/console?${new URLSearchParams({ ...view.filters, cursor: view.nodes.nextCursor })}`}>
                Next page
              </a>
            </p>
          )}
        </>
      )}
      <h2>Capacity per pool</h2>
      <Capacity pools={view.pools} />
      <h2>Waiting for approval</h2>
      <Table
        columns={['Hostname', 'Node', 'Joined', 'Decision']}
        items={view.pending}
        row={(node) => [
          node.hostname,
          <code>{node.id}</code>,
          node.createdAt,
          operator ? (
            <Decision node={node} session={view.session} pools={view.pools.map((p) => p.pool.id)} />
          ) : (
            <span class="muted">an operator approves</span>
          ),
        ]}
        empty="No pending nodes."
      />
    </Layout>
  );
}

function Filters(props: { filters: FleetFilters; pools: string[] }) {
  const f = props.filters;
  const choice = (name: keyof FleetFilters, title: string, values: readonly string[]) => (
    <label>
      {title}
      <select name={name}>
        <option value="">any</option>
        {values.map((v) => (
          <option value={v} selected={f[name] === v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <form method="get" action="/console" class="filters">
      <label>
        hostname
        <input name="hostname" value={f.hostname ?? ''} placeholder="part of a hostname" size={18} />
      </label>
      <label>
        labels
        <input name="selector" value={f.selector ?? ''} placeholder="rack=b7,gpu.model=H100" size={22} />
      </label>
      {choice('poolId', 'pool', props.pools)}
      <label>
        tenant
        <input name="tenantId" value={f.tenantId ?? ''} size={12} />
      </label>
      <label>
        site
        <input name="siteId" value={f.siteId ?? ''} size={10} />
      </label>
      {choice('provisionState', 'state', PROVISION_STATES)}
      {choice('access', 'access', ACCESS)}
      {choice('liveness', 'liveness', LIVENESS)}
      {choice('cordoned', 'cordoned', ['true', 'false'])}
      <button type="submit">Filter</button>
    </form>
  );
}

function NodeTable(props: { nodes: Node[] }) {
  return (
    <Table
      columns={['Hostname', 'Pool', 'State', 'Access', 'Cordoned', 'Liveness', 'NoSchedule', 'Last seen']}
      items={props.nodes}
      row={(node) => [
        <a href={`/console/nodes/${node.id}`}>{node.hostname}</a>,
        node.poolId ?? '—',
        node.provisionState,
        node.access,
        node.cordoned ? 'cordoned' : 'no',
        node.liveness,
        node.noScheduleReasons.join(', ') || '—',
        node.lastSeenAt ?? 'never',
      ]}
      empty="No nodes match."
    />
  );
}

function Capacity(props: { pools: FleetView['pools'] }) {
  return (
    <Table
      columns={['Pool', 'Total', ...CAPACITY_BUCKETS]}
      items={props.pools}
      row={({ pool, capacity }) => [
        <a href={`/console?${new URLSearchParams({ poolId: pool.id })}`}>{pool.id}</a>,
        capacity?.total ?? '?',
        ...CAPACITY_BUCKETS.map((bucket) => capacity?.buckets[bucket] ?? '?'),
      ]}
      empty="No pools visible to this key."
    />
  );
}

/** Approve (into a pool, when the node has none) or reject a pending node. */
function Decision(props: { node: Node; session: Session; pools: string[] }) {
  const { node, session } = props;
  return (
    <div class="controls">
      <form method="post" action={`/console/nodes/${node.id}/approve`} class="inline">
        <Csrf session={session} />
        <input type="hidden" name="version" value={String(node.version)} />
        {!node.poolId && (
          <select name="poolId" required>
            {props.pools.map((id) => (
              <option value={id}>{id}</option>
            ))}
          </select>
        )}
        <button type="submit">Approve</button>
      </form>
      <form method="post" action={`/console/nodes/${node.id}/reject`} class="inline">
        <Csrf session={session} />
        <input type="hidden" name="version" value={String(node.version)} />
        <button type="submit">Reject</button>
      </form>
    </div>
  );
}

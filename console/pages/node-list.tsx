import type { Schemas } from '@drydock/client';
import { ACCESS, isDraining, LIVENESS, PROVISION_STATES } from '../../domain/node';
import { AccessBadge, CordonBadge, DrainingBadge, LivenessBadge, MaintenanceBadge } from '../badge';
import { Layout } from '../layout';
import { LiveRegion } from '../live';
import { gpuOf, sortParam, type NodeSort, type SortKey } from '../node-sort';
import type { Flash, Session } from '../sessions';
import { When } from '../time';

type Node = Schemas['Node'];

/** The `GET /v1/nodes` filters the node list offers, as the page's own query carries them. */
export const NODE_LIST_FILTERS = [
  'hostname',
  'selector',
  'poolId',
  'tenantId',
  'siteId',
  'provisionState',
  'access',
  'liveness',
  'cordoned',
  'maintenance',
  'noScheduleReason',
] as const;
export type NodeListFilters = Partial<Record<(typeof NODE_LIST_FILTERS)[number], string>>;

/** How many nodes a page of the list shows. */
export const NODES_PER_PAGE = 50;

export interface NodeListView {
  session: Session;
  flash?: Flash;
  filters: NodeListFilters;
  sort: NodeSort;
  /** The page's nodes (page counts from 1) of `total` that match, or why the query was refused. */
  nodes: { items: Node[]; page: number; total: number } | { problem: string };
  pools: string[];
}

const COLUMNS: { title: string; sort?: SortKey }[] = [
  { title: 'Hostname', sort: 'hostname' },
  { title: 'Pool', sort: 'pool' },
  { title: 'State', sort: 'state' },
  { title: 'Access', sort: 'access' },
  { title: 'Cordoned', sort: 'cordoned' },
  { title: 'Draining', sort: 'draining' },
  { title: 'Maintenance', sort: 'maintenance' },
  { title: 'Liveness', sort: 'liveness' },
  { title: 'GPU', sort: 'gpu' },
  { title: 'NoSchedule' },
  { title: 'Last seen', sort: 'lastSeen' },
];

/** The node list: the API's filters, sorted by a column, 50 a page, following the event feed. */
export function NodeListPage(view: NodeListView) {
  const { nodes } = view;
  return (
    <Layout title="Nodes" session={view.session} flash={view.flash} watch={{}}>
      <h1>Nodes</h1>
      <Filters filters={view.filters} sort={view.sort} pools={view.pools} />
      {'problem' in nodes ? (
        <p class="flash error" role="alert">
          {nodes.problem}
        </p>
      ) : (
        <LiveRegion id="nodes">
          <NodeTable view={view} nodes={nodes} />
        </LiveRegion>
      )}
    </Layout>
  );
}

/** The list's own address with these filters, this order and this page. */
function listUrl(filters: NodeListFilters, sort: NodeSort, page = 1): string {
  const query = new URLSearchParams(filters);
  if (sortParam(sort) !== 'hostname') query.set('sort', sortParam(sort));
  if (page > 1) query.set('page', String(page));
  const text = query.toString();
  return text ? `/console/nodes?${text}` : '/console/nodes';
}

function NodeTable(props: { view: NodeListView; nodes: { items: Node[]; page: number; total: number } }) {
  const { filters, sort } = props.view;
  const { items, page, total } = props.nodes;
  if (total === 0) return <Empty filters={filters} />;
  const pages = Math.ceil(total / NODES_PER_PAGE);
  const first = (page - 1) * NODES_PER_PAGE + 1;
  return (
    <>
      <p class="muted">
        {items.length === 0
          ? `Page ${page} is past the end: ${total} nodes match, ${pages} page${pages === 1 ? '' : 's'}.`
          : `Nodes ${first}–${first + items.length - 1} of ${total}, by ${sort.key}${sort.descending ? ' (descending)' : ''}.`}
      </p>
      <div class="table-box">
        <table class="node-list">
          <thead>
            <tr>
              {COLUMNS.map((column) => (
                <SortableHeader column={column} filters={filters} sort={sort} />
              ))}
            </tr>
          </thead>
          <tbody>
            {items.map((node) => (
              <tr>
                <td>
                  <a href={`/console/nodes/${node.id}`}>{node.hostname}</a>
                </td>
                <td>{node.poolId ?? '—'}</td>
                <td>{node.provisionState}</td>
                <td>
                  <AccessBadge access={node.access} />
                </td>
                <td>
                  <CordonBadge cordoned={node.cordoned} />
                </td>
                <td>{isDraining(node) ? <DrainingBadge /> : 'no'}</td>
                <td>
                  <MaintenanceBadge maintenance={node.maintenance} />
                </td>
                <td>
                  <LivenessBadge liveness={node.liveness} />
                </td>
                <td>{gpuOf(node) || '—'}</td>
                <td>{node.noScheduleReasons.join(', ') || '—'}</td>
                <td>{node.lastSeenAt ? <When at={node.lastSeenAt} /> : 'never'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="paging" aria-label="Pages">
        {page > 1 && <a href={listUrl(filters, sort, Math.min(page - 1, pages))}>Previous page</a>}
        {page < pages && <a href={listUrl(filters, sort, page + 1)}>Next page</a>}
      </nav>
    </>
  );
}

/** A column's header: a link that sorts by it, ascending, or descending when it already is. */
function SortableHeader(props: {
  column: (typeof COLUMNS)[number];
  filters: NodeListFilters;
  sort: NodeSort;
}) {
  const { column, sort } = props;
  if (!column.sort) return <th scope="col">{column.title}</th>;
  const current = sort.key === column.sort;
  const next: NodeSort = { key: column.sort, descending: current && !sort.descending };
  return (
    <th scope="col" aria-sort={current ? (sort.descending ? 'descending' : 'ascending') : undefined}>
      <a href={listUrl(props.filters, next)}>
        {column.title}
        {current && <span aria-hidden="true">{sort.descending ? ' ▼' : ' ▲'}</span>}
      </a>
    </th>
  );
}

function Empty(props: { filters: NodeListFilters }) {
  if (Object.keys(props.filters).length === 0) {
    return (
      <p class="muted">
        No nodes yet. A machine joins with a <a href="/console/tokens">join token</a> (
        <code>drydock-agent join --api … --token …</code>); an operator then approves it on the{' '}
        <a href="/console">overview</a>.
      </p>
    );
  }
  return (
    <p class="muted">
      No node matches these filters: widen them, or <a href="/console/nodes">clear them all</a>.
    </p>
  );
}

function Filters(props: { filters: NodeListFilters; sort: NodeSort; pools: string[] }) {
  const f = props.filters;
  const choice = (name: keyof NodeListFilters, title: string, values: readonly string[]) => (
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
    <form method="get" action="/console/nodes" class="filters">
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
      {choice('maintenance', 'maintenance', ['true', 'false'])}
      <label>
        NoSchedule reason
        <input
          name="noScheduleReason"
          value={f.noScheduleReason ?? ''}
          placeholder="draining, quarantined, …"
          size={16}
        />
      </label>
      {sortParam(props.sort) !== 'hostname' && (
        <input type="hidden" name="sort" value={sortParam(props.sort)} />
      )}
      <button type="submit">Filter</button>
    </form>
  );
}

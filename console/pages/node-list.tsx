import type { Answer, Schemas } from '@drydock/client';
import { ACCESS, isDraining, LIVENESS, PROVISION_STATES } from '../../domain/node';
import { AccessBadge, CordonBadge, DrainingBadge, LivenessBadge, MaintenanceBadge } from '../badge';
import { Layout } from '../layout';
import { LiveRegion } from '../live';
import { nodeOrderOf, type NodeSortKey } from '../../domain/node-order';
import type { Flash, Session } from '../sessions';
import { When } from '../time';

type Node = Schemas['Node'];
type NodePage = Answer<'get', '/v1/nodes'>;

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

/** The list's order unless the page's `sort` names another: by hostname, as people read them. */
export const DEFAULT_SORT = 'hostname';

/** A node's GPUs as its inventory labels say them: `H100 × 8`; empty when it has none. */
function gpuOf(node: Node): string {
  const label = (key: string) => node.labels.find((l) => l.key === key)?.value;
  const model = label('gpu.model');
  const count = label('gpu.count');
  if (!model) return '';
  return count ? `${model} × ${count}` : model;
}

export interface NodeListView {
  session: Session;
  flash?: Flash;
  filters: NodeListFilters;
  /** The order, as `GET /v1/nodes` takes it (`hostname`, `-lastSeenAt`). */
  sort: string;
  /** A page of the nodes that match, with the cursors of the pages beside it, or why the query was refused. */
  nodes: NodePage | { problem: string };
  pools: string[];
}

const COLUMNS: { title: string; sort?: NodeSortKey }[] = [
  { title: 'Hostname', sort: 'hostname' },
  { title: 'Pool', sort: 'poolId' },
  { title: 'State', sort: 'provisionState' },
  { title: 'Access', sort: 'access' },
  { title: 'Cordoned', sort: 'cordoned' },
  { title: 'Draining' },
  { title: 'Maintenance', sort: 'maintenance' },
  { title: 'Liveness', sort: 'liveness' },
  { title: 'GPU', sort: 'label:gpu.model' },
  { title: 'NoSchedule' },
  { title: 'Last seen', sort: 'lastSeenAt' },
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

/** The list's own address with these filters, this order, and a page (after or before a cursor). */
function listUrl(
  filters: NodeListFilters,
  sort: string,
  page: { cursor?: string; before?: string } = {},
): string {
  const query = new URLSearchParams(filters);
  if (sort !== DEFAULT_SORT) query.set('sort', sort);
  if (page.cursor) query.set('cursor', page.cursor);
  if (page.before) query.set('before', page.before);
  const text = query.toString();
  return text ? `/console/nodes?${text}` : '/console/nodes';
}

/** The order in words: "by hostname", "by lastSeenAt, descending". */
function orderInWords(sort: string): string {
  const order = nodeOrderOf(sort);
  return `by ${order.key.replace(/^label:/, '')}${order.descending ? ', descending' : ''}`;
}

function NodeTable(props: { view: NodeListView; nodes: NodePage }) {
  const { filters, sort } = props.view;
  const { items, nextCursor, prevCursor } = props.nodes;
  if (items.length === 0 && !prevCursor) return <Empty filters={filters} />;
  return (
    <>
      <p class="muted">
        {items.length === 0
          ? 'No more nodes past this page.'
          : `${items.length} node${items.length === 1 ? '' : 's'}${prevCursor || nextCursor ? ' on this page' : ''}, ${orderInWords(sort)}.`}
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
        {prevCursor && <a href={listUrl(filters, sort)}>First page</a>}
        {prevCursor && <a href={listUrl(filters, sort, { before: prevCursor })}>Previous page</a>}
        {nextCursor && <a href={listUrl(filters, sort, { cursor: nextCursor })}>Next page</a>}
      </nav>
    </>
  );
}

/** A column's header: a link that sorts by it, ascending, or descending when it already is. */
function SortableHeader(props: { column: (typeof COLUMNS)[number]; filters: NodeListFilters; sort: string }) {
  const { column, sort } = props;
  if (!column.sort) return <th scope="col">{column.title}</th>;
  const order = nodeOrderOf(sort);
  const current = order.key === column.sort;
  const next = current && !order.descending ? `-${column.sort}` : column.sort;
  return (
    <th scope="col" aria-sort={current ? (order.descending ? 'descending' : 'ascending') : undefined}>
      <a href={listUrl(props.filters, next)}>
        {column.title}
        {current && <span aria-hidden="true">{order.descending ? ' ▼' : ' ▲'}</span>}
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

function Filters(props: { filters: NodeListFilters; sort: string; pools: string[] }) {
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
      {props.sort !== DEFAULT_SORT && <input type="hidden" name="sort" value={props.sort} />}
      <button type="submit">Filter</button>
    </form>
  );
}

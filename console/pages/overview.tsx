import type { Schemas } from '@drydock/client';
import { StatusBadge } from '../badge';
import { CapacityBars } from '../capacity-bars';
import type { PoolWithCapacity } from '../context';
import { Csrf, Layout, Table } from '../layout';
import { LiveRegion } from '../live';
import { NODE_COUNTS } from '../../domain/node-state';
import { COUNT_WORDS } from '../node-states';
import { RackMap } from '../rack-map';
import type { Flash, Session } from '../sessions';
import { When } from '../time';

type Node = Schemas['Node'];
type Operation = Schemas['Operation'];
type Summary = Schemas['NodeSummary'];

export interface OverviewView {
  session: Session;
  flash?: Flash;
  /** The nodes the key sees, counted and grouped by the rack map's label (or by rack when refused). */
  summary: Summary;
  /** The nodes waiting for approval (a page of them). */
  pending: Node[];
  pools: PoolWithCapacity[];
  /** The pending and running operations, oldest first; `more` when not all were read. */
  operations: { items: Operation[]; more: boolean };
  /** The label the rack map groups by, or why the page's `groupBy` was refused. */
  groupBy: string | { problem: string };
}

/** The landing page: the fleet at a glance. */
export function OverviewPage(view: OverviewView) {
  const { summary, groupBy } = view;
  const hostnames = new Map(summary.groups.flatMap((g) => g.nodes.map((node) => [node.id, node.hostname])));
  return (
    <Layout title="Fleet overview" session={view.session} flash={view.flash} watch={{}}>
      <h1>Fleet overview</h1>
      <LiveRegion id="counts">
        <h2>Nodes by state</h2>
        <StateCounts counts={summary.counts} />
      </LiveRegion>
      <LiveRegion id="capacity">
        <h2>Capacity per pool</h2>
        <CapacityBars pools={view.pools} />
      </LiveRegion>
      <LiveRegion id="operations">
        <h2>Running operations</h2>
        <OperationsByKind operations={view.operations} hostnames={hostnames} />
      </LiveRegion>
      <LiveRegion id="rack-map">
        <h2>Rack map</h2>
        {typeof groupBy === 'string' ? (
          <RackMap summary={summary} />
        ) : (
          <p class="flash error" role="alert">
            {groupBy.problem}
          </p>
        )}
      </LiveRegion>
      <LiveRegion id="pending">
        <h2>Waiting for approval</h2>
        <Pending nodes={view.pending} session={view.session} pools={view.pools.map((p) => p.pool.id)} />
      </LiveRegion>
    </Layout>
  );
}

/** Each state's count, linked to the node list filtered to it. */
function StateCounts(props: { counts: Summary['counts'] }) {
  return (
    <ul class="state-counts">
      {NODE_COUNTS.map(({ name, filter }) => (
        <li>
          <a href={`/console/nodes?${new URLSearchParams(filter)}`}>
            <span class="count">{props.counts[name]}</span> {COUNT_WORDS[name]}
          </a>
        </li>
      ))}
    </ul>
  );
}

/** The open operations, one table per kind (kinds by their oldest operation), oldest first. */
function OperationsByKind(props: { operations: OverviewView['operations']; hostnames: Map<string, string> }) {
  const byKind = new Map<string, Operation[]>();
  for (const op of props.operations.items) byKind.set(op.kind, [...(byKind.get(op.kind) ?? []), op]);
  if (byKind.size === 0) {
    return (
      <p class="muted">Nothing is running: drains, maintenances and remediations show here while they run.</p>
    );
  }
  return (
    <>
      {[...byKind.entries()].map(([kind, operations]) => (
        <>
          <h3>
            {kind} ({operations.length})
          </h3>
          <Table
            columns={['Since', 'Status', 'On', 'By', 'Operation']}
            items={operations}
            row={(op) => [
              <When at={op.createdAt} />,
              <StatusBadge status={op.status} />,
              <Target op={op} hostnames={props.hostnames} />,
              op.actor,
              <a href={`/console/operations/${op.id}`}>{op.id}</a>,
            ]}
            empty=""
          />
        </>
      ))}
      {props.operations.more && (
        <p class="muted">
          More are open than the overview reads: the{' '}
          <a href="/console/operations?status=running">operations list</a> has them all.
        </p>
      )}
    </>
  );
}

/** What an operation acts on: its node by hostname, else its pool. */
function Target(props: { op: Operation; hostnames: Map<string, string> }) {
  const { op } = props;
  if (op.nodeId)
    return <a href={`/console/nodes/${op.nodeId}`}>{props.hostnames.get(op.nodeId) ?? op.nodeId}</a>;
  if (op.poolId) return <a href={`/console/pools/${op.poolId}`}>{op.poolId}</a>;
  return <span class="muted">—</span>;
}

/** The nodes waiting for approval; operators approve (into a pool, when the node has none) or reject. */
function Pending(props: { nodes: Node[]; session: Session; pools: string[] }) {
  const operator = props.session.caller.kind === 'operator';
  return (
    <Table
      columns={['Hostname', 'Node', 'Joined', 'Asks for', 'Decision']}
      items={props.nodes}
      row={(node) => [
        node.hostname,
        <code>{node.id}</code>,
        <When at={node.createdAt} />,
        node.requestedPoolId ?? <span class="muted">no pool</span>,
        operator ? (
          <Decision node={node} session={props.session} pools={props.pools} />
        ) : (
          <span class="muted">an operator approves</span>
        ),
      ]}
      empty="No node is waiting for approval."
    />
  );
}

function Decision(props: { node: Node; session: Session; pools: string[] }) {
  const { node, session } = props;
  return (
    <div class="controls">
      <form method="post" action={`/console/nodes/${node.id}/approve`} class="inline">
        <Csrf session={session} />
        <input type="hidden" name="version" value={String(node.version)} />
        {!node.poolId && (
          <select name="poolId" required aria-label={`Pool for ${node.hostname}`}>
            {props.pools.map((id) => (
              <option value={id} selected={id === node.requestedPoolId}>
                {id}
              </option>
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

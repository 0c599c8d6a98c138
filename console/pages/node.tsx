import type { Schemas } from '../../client';
import { controlRefusal } from '../../domain/node';
import { Csrf, Layout } from '../layout';
import type { Flash, Session } from '../sessions';

type Node = Schemas['Node'];

export interface NodeView {
  session: Session;
  flash?: Flash;
  node: Node;
  allocations: Schemas['Allocation'][];
  /** Running operations as `GET /v1/operations/{id}` reads them (with `progress`). */
  operations: Schemas['Operation'][];
  events: { items: Schemas['Event'][]; nextCursor: string | null; type?: string };
  /** Opens a workflow in the Temporal UI; undefined when no UI is configured. */
  workflowUrl?: (workflowId: string) => string;
}

export function NodePage(view: NodeView) {
  const { node } = view;
  return (
    <Layout title={node.hostname} session={view.session} flash={view.flash}>
      <h1>
        {node.hostname} <span class="muted">{node.displayName ?? ''}</span>
      </h1>
      <p class="muted">
        <code>{node.id}</code> · pool {node.poolId ?? '—'} · tenant {node.tenantId ?? '—'} · site{' '}
        {node.siteId ?? '—'} · version {node.version}
      </p>
      <Axes node={node} />
      <Controls node={node} session={view.session} />
      <h2>Labels</h2>
      {node.labels.length === 0 ? (
        <p class="muted">No labels.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Key</th>
              <th>Value</th>
              <th>Source</th>
            </tr>
          </thead>
          <tbody>
            {node.labels.map((label) => (
              <tr>
                <td>
                  <code>{label.key}</code>
                </td>
                <td>{label.value}</td>
                <td>{label.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Taints</h2>
      <Taints node={node} />
      <h2>Conditions</h2>
      {node.conditions.length === 0 ? (
        <p class="muted">No conditions reported.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Type</th>
              <th>Status</th>
              <th>Reason</th>
              <th>Since</th>
              <th>Source</th>
            </tr>
          </thead>
          <tbody>
            {node.conditions.map((condition) => (
              <tr>
                <td>{condition.type}</td>
                <td>{condition.status ? 'true' : 'false'}</td>
                <td>{condition.reason ?? '—'}</td>
                <td>{condition.since}</td>
                <td>{condition.source ?? 'agent'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Live allocations</h2>
      {view.allocations.length === 0 ? (
        <p class="muted">No live allocations.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Allocation</th>
              <th>Tenant</th>
              <th>Kind</th>
              <th>Since</th>
              <th>Ends</th>
            </tr>
          </thead>
          <tbody>
            {view.allocations.map((a) => (
              <tr>
                <td>
                  <code>{a.id}</code>
                </td>
                <td>{a.tenantId}</td>
                <td>{a.kind}</td>
                <td>{a.createdAt}</td>
                <td>{a.endsAt ?? 'open-ended'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Running operations</h2>
      <Operations operations={view.operations} workflowUrl={view.workflowUrl} />
      <h2>Events, newest first</h2>
      <Events node={node} events={view.events} />
    </Layout>
  );
}

function Axes(props: { node: Node }) {
  const { node } = props;
  const axes: [string, string][] = [
    ['state', node.provisionState],
    ['access', node.access],
    ['cordon', node.cordoned ? 'cordoned' : 'not cordoned'],
    ['maintenance', node.maintenance ? 'in maintenance' : 'no'],
    ['NoSchedule', node.noScheduleReasons.join(', ') || 'none'],
    ['connectivity', node.connectivity],
    ['liveness', node.liveness],
    ['last seen', node.lastSeenAt ?? 'never'],
  ];
  return (
    <div class="axes">
      {axes.map(([name, value]) => (
        <div class="axis" data-axis={name}>
          <span class="name">{name}</span>
          <span class="value">{value}</span>
        </div>
      ))}
    </div>
  );
}

/** NoSchedule reasons that are taints (`taint:<key>`), as the API reports them. */
function Taints(props: { node: Node }) {
  const taints = props.node.noScheduleReasons.filter((r) => r.startsWith('taint:')).map((r) => r.slice(6));
  if (taints.length === 0) return <p class="muted">No taints.</p>;
  return (
    <ul>
      {taints.map((taint) => (
        <li>
          <code>{taint}</code>
        </li>
      ))}
    </ul>
  );
}

/** The controls this key may use on this node in its state; each a POST form through the API. */
function Controls(props: { node: Node; session: Session }) {
  const { node, session } = props;
  const refusal = controlRefusal({
    provisionState: node.provisionState,
    deletedAt: node.deletedAt ? new Date(node.deletedAt) : null,
  });
  if (refusal) return <p class="muted">No controls: {refusal}.</p>;
  const may = (action: Schemas['Caller']['actions'][number]) => session.caller.actions.includes(action);
  const forms = [may('compute:nodes:cordon') && (node.cordoned ? 'uncordon' : 'cordon')].filter(
    (control): control is string => Boolean(control),
  );
  if (forms.length === 0) return null;
  return (
    <div class="controls">
      {forms.map((control) => (
        <form method="post" action={`/console/nodes/${node.id}/${control}`} class="inline">
          <Csrf session={session} />
          <input type="hidden" name="version" value={String(node.version)} />
          <input name="reason" placeholder="reason (optional)" maxlength={256} />
          <button type="submit">{control === 'cordon' ? 'Cordon' : 'Uncordon'}</button>
        </form>
      ))}
    </div>
  );
}

function Operations(props: { operations: Schemas['Operation'][]; workflowUrl?: (id: string) => string }) {
  if (props.operations.length === 0) return <p class="muted">No running operations.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>Operation</th>
          <th>Kind</th>
          <th>Status</th>
          <th>Since</th>
          <th>Progress</th>
          <th>Workflow</th>
        </tr>
      </thead>
      <tbody>
        {props.operations.map((op) => (
          <tr>
            <td>
              <code>{op.id}</code>
            </td>
            <td>{op.kind}</td>
            <td>{op.status}</td>
            <td>{op.createdAt}</td>
            <td>
              <code>
                {op.progress === undefined || op.progress === null ? '—' : JSON.stringify(op.progress)}
              </code>
            </td>
            <td>
              {props.workflowUrl ? (
                <a href={props.workflowUrl(op.workflowId)}>{op.workflowId}</a>
              ) : (
                <code>{op.workflowId}</code>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Events(props: { node: Node; events: NodeView['events'] }) {
  const { node, events } = props;
  const base = `/console/nodes/${node.id}`;
  return (
    <>
      <form method="get" action={base} class="filters">
        <label>
          type prefix
          <input name="type" value={events.type ?? ''} placeholder="node." size={20} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {events.items.length === 0 ? (
        <p class="muted">No events.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Type</th>
              <th>Actor</th>
              <th>Reason</th>
              <th>Operation</th>
            </tr>
          </thead>
          <tbody>
            {events.items.map((event) => (
              <tr>
                <td>{event.createdAt}</td>
                <td>{event.type}</td>
                <td>{event.actor}</td>
                <td>{event.reason ?? '—'}</td>
                <td>{event.operationId ? <code>{event.operationId}</code> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {events.nextCursor && (
        <p>
          <a
            href={`${base}?${new URLSearchParams({ ...(events.type ? { type: events.type } : {}), cursor: events.nextCursor })}`}
          >
            Older events
          </a>
        </p>
      )}
    </>
  );
}

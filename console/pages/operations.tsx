import type { Schemas } from '@drydock/client';
import { OPERATION_KINDS, OPERATION_STATUSES } from '../../domain/operation';
import { Layout } from '../layout';
import { LiveRegion } from '../live';
import { mayUseOnPool } from '../permissions';
import { Progress } from '../progress';
import { MaintenanceTimeline, stepsOfMaintenance } from './maintenance-timeline';
import { RollingMaintenance } from './rolling-maintenance';
import type { Rolling } from '../rolling';
import type { Flash, Session } from '../sessions';
import { StatusBadge } from '../badge';
import { When } from '../time';
import { DrainTimeline, type NodeAllocations } from '../drain-timeline';
import { RollingGantt } from '../rolling-gantt';
import { cancellable, KIND_WORDS } from './cancel';

type Operation = Schemas['Operation'];

/** The `GET /v1/operations` filters the operations page offers, as its own query carries them. */
export const OPERATION_FILTERS = ['kind', 'status'] as const;
export type OperationFilters = Partial<Record<(typeof OPERATION_FILTERS)[number], string>>;

export interface OperationsView {
  session: Session;
  flash?: Flash;
  filters: OperationFilters;
  /** The page of operations, or the API's refusal of the filters. */
  operations: { items: Operation[]; nextCursor: string | null } | { problem: string };
  /** The hostnames of the nodes the operations work on, by node id (one read per pool, not per row). */
  hostnames: Map<string, string>;
  workflowUrl?: (workflowId: string) => string;
}

/** Operations, newest first, filtered by kind and status and paged as the API pages them. */
export function OperationsPage(view: OperationsView) {
  const { operations, filters } = view;
  return (
    <Layout title="Operations" session={view.session} flash={view.flash} watch={{}}>
      <h1>Operations</h1>
      <Filters filters={filters} />
      {'problem' in operations ? (
        <p class="flash error" role="alert">
          {operations.problem}
        </p>
      ) : (
        <>
          <LiveRegion id="operations">
            <OperationTable
              operations={operations.items}
              hostnames={view.hostnames}
              workflowUrl={view.workflowUrl}
            />
          </LiveRegion>
          {operations.nextCursor && (
            <p>
              <a
                href={`/console/operations?${new URLSearchParams({ ...filters, cursor: operations.nextCursor })}`}
              >
                Older operations
              </a>
            </p>
          )}
        </>
      )}
    </Layout>
  );
}

function Filters(props: { filters: OperationFilters }) {
  const choice = (name: keyof OperationFilters, values: readonly string[]) => (
    <label>
      {name}
      <select name={name}>
        <option value="">any</option>
        {values.map((v) => (
          <option value={v} selected={props.filters[name] === v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <form method="get" action="/console/operations" class="filters">
      {choice('kind', OPERATION_KINDS)}
      {choice('status', OPERATION_STATUSES)}
      <button type="submit">Filter</button>
    </form>
  );
}

/**
 * Operations one row each: the operation (its page), kind, status, the node by hostname or the
 * pool, who asked and why, when it began and ended, its workflow. Each cell keeps to one line at a
 * desktop's width: a long actor wraps inside its own column, a long reason is cut short (its whole
 * text on hover and for screen readers), the workflow is a short link titled with its id.
 */
export function OperationTable(props: {
  operations: Operation[];
  /** Hostnames by node id; a node not in it is shown by its id. */
  hostnames?: Map<string, string>;
  workflowUrl?: (workflowId: string) => string;
  empty?: string;
}) {
  const { workflowUrl, hostnames } = props;
  if (props.operations.length === 0) return <p class="muted">{props.empty ?? 'No operations match.'}</p>;
  return (
    <div class="operation-list table-box">
      <table class="operations">
        <thead>
          <tr>
            <th scope="col">Operation</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">On</th>
            <th scope="col">Actor</th>
            <th scope="col">Reason</th>
            <th scope="col">Started</th>
            <th scope="col">Ended</th>
            <th scope="col">Workflow</th>
          </tr>
        </thead>
        <tbody>
          {props.operations.map((op) => (
            <tr data-operation={op.id}>
              <td>
                <a href={`/console/operations/${op.id}`}>
                  <code>{op.id}</code>
                </a>
              </td>
              <td class="kind">{op.kind}</td>
              <td>
                <StatusBadge status={op.status} />
              </td>
              <td class="on">
                <Target operation={op} hostname={op.nodeId ? hostnames?.get(op.nodeId) : undefined} />
              </td>
              <td class="actor">{op.actor}</td>
              <td class="reason" title={op.reason ?? undefined}>
                {op.reason ?? '—'}
              </td>
              <td class="when">
                <When at={op.createdAt} />
              </td>
              <td class="when">{op.completedAt ? <When at={op.completedAt} /> : '—'}</td>
              <td>
                {workflowUrl ? (
                  <a href={workflowUrl(op.workflowId)} title={op.workflowId}>
                    workflow
                  </a>
                ) : (
                  <code class="workflow-id" title={op.workflowId}>
                    {op.workflowId}
                  </code>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The node (by hostname, its id in the title) or pool an operation works on, linked to its page. */
function Target(props: { operation: Operation; hostname?: string }) {
  const { nodeId, poolId } = props.operation;
  if (nodeId) {
    return (
      <a href={`/console/nodes/${nodeId}`} title={nodeId} data-node={nodeId}>
        {props.hostname ?? nodeId}
      </a>
    );
  }
  if (poolId) return <a href={`/console/pools/${poolId}`}>pool {poolId}</a>;
  return <span class="muted">—</span>;
}

/**
 * One operation (`GET /v1/operations/{id}`): what it works on, who asked and why, its progress in
 * words and, for a maintenance, its steps as a timeline; for a rolling maintenance, one timeline row
 * per node (`rolling`: its node maintenances read) with its controls.
 */
export function OperationPage(props: {
  session: Session;
  flash?: Flash;
  operation: Operation;
  /** The node it works on, as the key reads it (its hostname); null when none or unreadable. */
  node?: Schemas['Node'] | null;
  rolling?: Rolling;
  /** A drain's node's allocations, for its picture. */
  allocations?: NodeAllocations;
  workflowUrl?: (workflowId: string) => string;
}) {
  const { operation: op, workflowUrl } = props;
  const open = op.status === 'pending' || op.status === 'running';
  const now = Date.now();
  const operator = props.session.caller.kind === 'operator';
  return (
    <Layout
      title={`${op.kind} ${op.id}`}
      session={props.session}
      flash={props.flash}
      watch={op.nodeId ? { nodeId: op.nodeId } : {}}
    >
      <h1>
        {op.kind} <code>{op.id}</code>
      </h1>
      <LiveRegion id="operation" busy={open}>
        <dl class="facts">
          <dt>status</dt>
          <dd>
            <StatusBadge status={op.status} />
          </dd>
          <dt>on</dt>
          <dd>
            <Target operation={op} hostname={props.node?.hostname} />
          </dd>
          {op.parentOperationId && (
            <>
              <dt>part of</dt>
              <dd>
                <a href={`/console/operations/${op.parentOperationId}`}>
                  <code>{op.parentOperationId}</code>
                </a>
              </dd>
            </>
          )}
          <dt>asked by</dt>
          <dd class="actor">{op.actor}</dd>
          <dt>reason</dt>
          <dd>{op.reason ?? '—'}</dd>
          <dt>started</dt>
          <dd>
            <When at={op.createdAt} />
          </dd>
          <dt>ended</dt>
          <dd>{op.completedAt ? <When at={op.completedAt} /> : '—'}</dd>
          <dt>workflow</dt>
          <dd>
            {workflowUrl ? (
              <a href={workflowUrl(op.workflowId)}>{op.workflowId}</a>
            ) : (
              <code>{op.workflowId}</code>
            )}
          </dd>
        </dl>
        {/* A rolling maintenance's own controls carry its cancel; every other open operation gets one here. */}
        {operator && open && !props.rolling && <CancelControl operation={op} />}
        <h2>Progress</h2>
        {props.rolling ? (
          <>
            <RollingMaintenance
              rolling={props.rolling}
              session={props.session}
              controls={mayUseOnPool(null, props.session, 'operator')}
              back="operation"
            />
            <h3>Node by node, over time</h3>
            <RollingGantt rolling={props.rolling} now={now} />
          </>
        ) : (
          <Progress operation={op} />
        )}
        {op.kind === 'maintenance' && <MaintenanceTimeline rows={[{ steps: stepsOfMaintenance(op) }]} />}
        {op.kind === 'drain' && props.allocations && (
          <>
            <h2>Its allocations against its deadline</h2>
            <DrainTimeline operation={op} allocations={props.allocations} now={now} />
          </>
        )}
      </LiveRegion>
    </Layout>
  );
}

/** The way to an open operation's cancel: its confirmation page, or why none is offered. */
function CancelControl(props: { operation: Operation }) {
  const op = props.operation;
  if (!cancellable(op)) {
    return (
      <p class="muted" data-cannot-cancel="">
        Past its point of no return (the node's identity is revoked): this decommission runs to its end and
        cannot be cancelled.
      </p>
    );
  }
  return (
    <form method="get" action={`/console/operations/${op.id}/cancel`} class="controls">
      <button type="submit">Cancel {KIND_WORDS[op.kind]}…</button>
    </form>
  );
}

import type { Schemas } from '@drydock/client';
import { OPERATION_KINDS, OPERATION_STATUSES } from '../../domain/operation';
import { Layout, Table } from '../layout';
import { LiveRegion } from '../live';
import { mayUseOnPool } from '../permissions';
import { Progress } from '../progress';
import { MaintenanceTimeline, stepsOfMaintenance } from './maintenance-timeline';
import { RollingMaintenance } from './rolling-maintenance';
import type { Rolling } from '../rolling';
import type { Flash, Session } from '../sessions';
import { StatusBadge } from '../badge';
import { When } from '../time';

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
            <OperationTable operations={operations.items} workflowUrl={view.workflowUrl} />
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

/** Operations one row each: what, on which node or pool, by whom, when, and its workflow. */
export function OperationTable(props: {
  operations: Operation[];
  workflowUrl?: (workflowId: string) => string;
  empty?: string;
}) {
  const { workflowUrl } = props;
  return (
    <div class="operation-list">
      <Table
        columns={['Operation', 'Kind', 'Status', 'On', 'Actor', 'Reason', 'Started', 'Ended', 'Workflow']}
        items={props.operations}
        row={(op) => [
          <a href={`/console/operations/${op.id}`}>
            <code>{op.id}</code>
          </a>,
          op.kind,
          <StatusBadge status={op.status} />,
          <Target operation={op} />,
          op.actor,
          op.reason ?? '—',
          <When at={op.createdAt} />,
          op.completedAt ? <When at={op.completedAt} /> : '—',
          workflowUrl ? (
            <a href={workflowUrl(op.workflowId)}>{op.workflowId}</a>
          ) : (
            <code>{op.workflowId}</code>
          ),
        ]}
        empty={props.empty ?? 'No operations match.'}
      />
    </div>
  );
}

/** The node or pool an operation works on, linked to its page. */
function Target(props: { operation: Operation }) {
  const { nodeId, poolId } = props.operation;
  if (nodeId) return <a href={`/console/nodes/${nodeId}`}>{nodeId}</a>;
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
  rolling?: Rolling;
  workflowUrl?: (workflowId: string) => string;
}) {
  const { operation: op, workflowUrl } = props;
  const open = op.status === 'pending' || op.status === 'running';
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
            <Target operation={op} />
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
          <dd>{op.actor}</dd>
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
        <h2>Progress</h2>
        {props.rolling ? (
          <RollingMaintenance
            rolling={props.rolling}
            session={props.session}
            controls={mayUseOnPool(null, props.session, 'operator')}
            back="operation"
          />
        ) : (
          <Progress operation={op} />
        )}
        {op.kind === 'maintenance' && <MaintenanceTimeline rows={[{ steps: stepsOfMaintenance(op) }]} />}
      </LiveRegion>
    </Layout>
  );
}

import type { Schemas } from '@drydock/client';
import { DEFAULT_MAX_UNAVAILABLE } from '../../domain/budget';
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_HEALTHY_AFTER_MS,
  DEFAULT_LADDER,
  DEFAULT_MAX_UNHEALTHY,
} from '../../domain/remediation';
import { CapacityChart, type CapacityHistory } from '../capacity-chart';
import { BUCKET_ORDER } from '../svg';
import { Csrf, Layout, Table } from '../layout';
import { LiveRegion } from '../live';
import { Progress } from '../progress';
import type { Capacity } from '../context';
import type { Flash, Session } from '../sessions';
import { mayUseOnPool } from '../permissions';
import { When } from '../time';
import type { Rolling } from '../rolling';
import { OperationTable } from './operations';
import { RollingForm, RollingMaintenance } from './rolling-maintenance';
import { fleetOfPool, ownerOf } from './pools';

type Pool = Schemas['Pool'];
type Operation = Schemas['Operation'];

export interface PoolView {
  session: Session;
  flash?: Flash;
  pool: Pool;
  capacity: Capacity;
  /** Its capacity over the last 24 hours and the last 7 days. */
  history: CapacityHistory[];
  /** The time the page was read at: the end of each chart's window. */
  now: number;
  /** The first page of the pool's nodes, and whether there are more. */
  nodes: { items: Schemas['Node'][]; more: boolean };
  /** The pool's running pool drain as `GET /v1/operations/{id}` reads it (with `progress`). */
  running: Operation | null;
  /** Its recent pool drains, newest first. */
  drains: Operation[];
  /** Its running or latest rolling maintenance, with its node maintenances; null when none. */
  rolling: Rolling | null;
  workflowUrl?: (workflowId: string) => string;
}

export function PoolPage(view: PoolView) {
  const { pool, session } = view;
  const actions = session.caller.actions;
  const rolling = view.rolling?.operation;
  const rollingOpen = rolling?.status === 'pending' || rolling?.status === 'running';
  return (
    <Layout title={`Pool ${pool.id}`} session={session} flash={view.flash} watch={{}}>
      <h1>
        Pool {pool.id} <span class="muted">{pool.kind}</span>
      </h1>
      <p class="muted">
        site {pool.siteId} · created {pool.createdAt}
      </p>
      <h2>Who may use it</h2>
      <dl class="facts">
        <dt>owner</dt>
        <dd>{ownerOf(pool)}</dd>
        <dt>granted to</dt>
        <dd>{pool.grants.length ? pool.grants.map((t) => `tenant ${t}`).join(', ') : 'no other tenant'}</dd>
      </dl>
      <h2>Policy</h2>
      <Policy policy={pool.policy} />
      {session.caller.kind === 'operator' && <PolicyForm pool={pool} session={session} />}
      <h2>Capacity</h2>
      <LiveRegion id="pool-capacity">
        <Table
          columns={['Total', ...BUCKET_ORDER]}
          items={[view.capacity]}
          row={(capacity) => [capacity.total, ...BUCKET_ORDER.map((bucket) => capacity.buckets[bucket])]}
          empty=""
        />
        <h3>Capacity over time</h3>
        {view.history.map((history) => (
          <CapacityChart history={history} now={view.now} />
        ))}
      </LiveRegion>
      <h2>Nodes</h2>
      <LiveRegion id="pool-nodes">
        <Table
          columns={['Hostname', 'State', 'Cordoned', 'Liveness', 'NoSchedule']}
          items={view.nodes.items}
          row={(node) => [
            <a href={`/console/nodes/${node.id}`}>{node.hostname}</a>,
            node.provisionState,
            node.cordoned ? 'cordoned' : 'no',
            node.liveness,
            node.noScheduleReasons.join(', ') || '—',
          ]}
          empty="No nodes in this pool."
        />
      </LiveRegion>
      <p>
        <a href={fleetOfPool(pool.id)}>
          {view.nodes.more ? 'All nodes of this pool in the fleet' : 'This pool in the fleet'}
        </a>
      </p>
      <h2>Pool drain</h2>
      {/* Busy while one runs: its timeline's bars and its line at now move without an event. */}
      <LiveRegion id="pool-drain" busy={view.running !== null}>
        <Running
          operation={view.running}
          session={session}
          pool={pool}
          workflowUrl={view.workflowUrl}
          cancel={session.caller.kind === 'operator'}
        />
        <h3>Recent pool drains</h3>
        <OperationTable
          operations={view.drains}
          workflowUrl={view.workflowUrl}
          empty="This pool has not been drained."
        />
      </LiveRegion>
      {!view.running && actions.includes('compute:nodes:drain') && (
        <DrainForm pool={pool} session={session} />
      )}
      <h2>Rolling maintenance</h2>
      <LiveRegion id="pool-maintenance" busy={rollingOpen}>
        {view.rolling ? (
          <RollingMaintenance
            rolling={view.rolling}
            session={session}
            controls={mayUseOnPool(null, session, 'operator')}
            back={`pool:${pool.id}`}
          />
        ) : (
          <p class="muted">This pool has had no rolling maintenance.</p>
        )}
      </LiveRegion>
      {!rollingOpen && mayUseOnPool(pool, session, 'compute:nodes:command') && (
        <RollingForm poolId={pool.id} session={session} />
      )}
    </Layout>
  );
}

/** Every policy field, in words, with what holds when it is not set. */
function Policy(props: { policy: Pool['policy'] }) {
  const { lostAfter, maxUnavailable, maxUnhealthy, remediation } = props.policy;
  const conditions = Object.entries(remediation ?? {});
  return (
    <>
      <dl class="facts">
        <dt>lost after</dt>
        <dd>
          {lostAfter
            ? `a node unreachable for longer than ${lostAfter} is marked lost`
            : 'not set: an unreachable node is never marked lost'}
        </dd>
        <dt>disruption budget (maxUnavailable)</dt>
        <dd>
          {budgetInWords(
            maxUnavailable,
            DEFAULT_MAX_UNAVAILABLE,
            'unavailable at once (drains release within it)',
          )}
        </dd>
        <dt>unhealthy allowance (maxUnhealthy)</dt>
        <dd>
          {budgetInWords(
            maxUnhealthy,
            DEFAULT_MAX_UNHEALTHY,
            'unhealthy or in remediation at once; past it, a new fault escalates to a person instead of being remediated',
          )}
        </dd>
      </dl>
      <h3>Remediation per condition</h3>
      <Table
        columns={['Condition', 'Actions, in order', 'Each attempt waits', 'Clear for']}
        items={conditions}
        row={([type, plan]) => [
          <code>{type}</code>,
          (plan.ladder ?? DEFAULT_LADDER).join(', then '),
          plan.attemptTimeout ?? `${DEFAULT_ATTEMPT_TIMEOUT_MS / 60_000}m (default)`,
          plan.healthyAfter ?? `${DEFAULT_HEALTHY_AFTER_MS / 1000}s (default)`,
        ]}
        empty={`No condition configured: every condition gets ${DEFAULT_LADDER.join(', then ')}, ${DEFAULT_ATTEMPT_TIMEOUT_MS / 60_000}m per attempt, clear for ${DEFAULT_HEALTHY_AFTER_MS / 1000}s.`}
      />
    </>
  );
}

/**
 * Change the grants and the policy (operators; `PATCH /v1/pools/{id}`): each field as it is now,
 * empty for its default; the form carries the version the page was read at.
 */
function PolicyForm(props: { pool: Pool; session: Session }) {
  const { pool, session } = props;
  const { lostAfter, maxUnavailable, maxUnhealthy, remediation } = pool.policy;
  return (
    <details>
      <summary>Change grants and policy (version {pool.version})</summary>
      <form method="post" action={`/console/pools/${pool.id}/update`} class="filters">
        <Csrf session={session} />
        <input type="hidden" name="version" value={String(pool.version)} />
        <label>
          granted to (tenants, comma-separated)
          <input name="grants" value={pool.grants.join(', ')} size={32} />
        </label>
        <label>
          maxUnavailable
          <input
            name="maxUnavailable"
            value={maxUnavailable?.toString() ?? ''}
            placeholder={`${DEFAULT_MAX_UNAVAILABLE} (default)`}
            size={10}
          />
        </label>
        <label>
          maxUnhealthy
          <input
            name="maxUnhealthy"
            value={maxUnhealthy?.toString() ?? ''}
            placeholder={`${DEFAULT_MAX_UNHEALTHY} (default)`}
            size={10}
          />
        </label>
        <label>
          lostAfter
          <input
            name="lostAfter"
            value={lostAfter ?? ''}
            placeholder="not set: never lost"
            size={12}
            maxlength={32}
          />
        </label>
        <label>
          remediation (JSON per condition type)
          <textarea name="remediation" rows={4} cols={60}>
            {remediation ? JSON.stringify(remediation) : ''}
          </textarea>
        </label>
        <label>
          reason
          <input name="reason" placeholder="optional" maxlength={256} size={24} />
        </label>
        <button type="submit">Save</button>
      </form>
    </details>
  );
}

/** A count or percent limit of the policy in words: "at most 2 nodes …", "at most 40% of the nodes …". */
function budgetInWords(value: number | string | undefined, fallback: number | string, what: string): string {
  const limit = value ?? fallback;
  const amount =
    typeof limit === 'number' ? `${limit} node${limit === 1 ? '' : 's'}` : `${limit} of its nodes`;
  return `at most ${amount} ${what}${value === undefined ? ' (default)' : ''}`;
}

/** The running pool drain with its progress, and its cancel for operators. */
function Running(props: {
  operation: Operation | null;
  session: Session;
  pool: Pool;
  cancel: boolean;
  workflowUrl?: (workflowId: string) => string;
}) {
  const op = props.operation;
  if (!op) return <p class="muted">No pool drain is running.</p>;
  return (
    <div class="pool-drain-running">
      <p>
        <code>{op.id}</code> {op.status} since <When at={op.createdAt} />, by {op.actor}: {op.reason ?? ''}
        {props.workflowUrl && (
          <>
            {' '}
            · <a href={props.workflowUrl(op.workflowId)}>workflow</a>
          </>
        )}
      </p>
      <Progress operation={op} />
      {props.cancel && (
        // The cancel of every operation: its confirmation page says what it does and asks for the
        // node drains running (finish, or cancel too), then comes back here.
        <form method="get" action={`/console/operations/${op.id}/cancel`} class="controls">
          <input type="hidden" name="back" value={`pool:${props.pool.id}`} />
          <button type="submit">Cancel pool drain…</button>
        </form>
      )}
    </div>
  );
}

/** Drain the pool's nodes that match a selector, a few at a time (`POST /v1/pools/{id}/drain`). */
function DrainForm(props: { pool: Pool; session: Session }) {
  return (
    <form method="post" action={`/console/pools/${props.pool.id}/drain`} class="filters">
      <Csrf session={props.session} />
      <label>
        nodes with labels
        <input name="selector" placeholder="rack=b7 (empty: every node)" size={24} maxlength={4096} />
      </label>
      <label>
        at most at once
        <input name="maxConcurrent" type="number" min={1} max={1000} placeholder="1" size={6} />
      </label>
      <label>
        deadline
        <input name="deadline" placeholder="2h, or a time; empty: wait" size={24} maxlength={64} />
      </label>
      <label>
        reason
        <input name="reason" placeholder="required" required maxlength={256} size={24} />
      </label>
      <button type="submit">Drain pool</button>
    </form>
  );
}

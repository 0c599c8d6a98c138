import type { Schemas } from '@drydock/client';
import { isDraining } from '../../domain/node';
import { remediationPlan } from '../../domain/remediation';
import type { Confirmation } from '../controls';
import { TypeHostname } from './danger';
import { Csrf, Layout, Table } from '../layout';
import { mayUse } from '../permissions';
import type { Flash, Session } from '../sessions';
import { When } from '../time';

type Node = Schemas['Node'];
type Allocation = Schemas['Allocation'];

export interface ActionPageProps {
  session: Session;
  flash?: Flash;
  node: Node;
  /** The control's name, the last segment of its path (`block`, `purge`). */
  control: string;
  confirmation: Confirmation;
  /** The node's live allocations: what the control does to them is said by name. */
  allocations: Allocation[];
  /** The pools an approval may put the node in (approve only). */
  pools: Schemas['Pool'][];
  /** The node's pool, for its remediation policy (remediate only). */
  pool?: Schemas['Pool'];
  /** What was typed in a refused submit (a mistyped hostname), kept for the next one. */
  typed?: { reason: string; force: boolean };
  /** The Idempotency-Key the form carries (a reboot's): a second submit is a replay. */
  idempotencyKey: string;
}

/**
 * A control's page, opened from the node page's Actions menu: what it does to this node (its live
 * allocations by name where they are concerned), then the one form that makes the call. For a
 * control that would otherwise act at once or cannot be undone it is a confirmation: the form
 * posts `confirm=yes`, and nothing changes until it is sent.
 */
export function ActionPage(props: ActionPageProps) {
  const { node, session, confirmation, control } = props;
  const base = `/console/nodes/${node.id}`;
  const title = `${confirmation.title} ${node.hostname}`;
  return (
    <Layout title={title} session={session} flash={props.flash}>
      <p class="crumbs">
        <a href={base}>← {node.hostname}</a>
      </p>
      <h1>{confirmation.optional ? title : `${title}?`}</h1>
      {confirmation.says.map((sentence) => (
        <p>{sentence}</p>
      ))}
      {control === 'uncordon' && isDraining(node) && (
        <p class="problem" data-warning="drain">
          {node.hostname} is draining: uncordoning it cancels the drain, and its allocations are no longer
          waited for.
        </p>
      )}
      {control === 'remediate' && <RemediateSays {...props} />}
      {(control === 'drain' || control === 'block' || control === 'purge' || control === 'adopt') && (
        <LiveAllocations allocations={props.allocations} />
      )}
      <form method="post" action={`${base}/${control}`} class="confirm">
        <Csrf session={session} />
        <input type="hidden" name="version" value={String(node.version)} />
        {!confirmation.optional && <input type="hidden" name="confirm" value="yes" />}
        {/* Back to this node afterwards, not to the overview the one-click forms return to. */}
        {(control === 'approve' || control === 'reject') && <input type="hidden" name="back" value="node" />}
        <Fields {...props} />
        <label>
          Reason
          {confirmation.reasonRequired ? (
            <input
              name="reason"
              placeholder="reason (required)"
              required
              maxlength={256}
              value={props.typed?.reason}
            />
          ) : (
            <input
              name="reason"
              placeholder="reason (optional)"
              maxlength={256}
              value={props.typed?.reason}
            />
          )}
        </label>
        <p class="form-buttons">
          <button type="submit" class={confirmation.optional ? undefined : 'danger'}>
            {confirmation.title} {node.hostname}
          </button>{' '}
          <a href={base}>Cancel</a>
        </p>
      </form>
    </Layout>
  );
}

/** The fields of one control's form, beside its reason. */
function Fields(props: ActionPageProps) {
  const { node, control } = props;
  switch (control) {
    case 'drain':
      return (
        <label>
          Deadline
          <input name="deadline" placeholder="2h, or a time; empty: wait" maxlength={64} />
        </label>
      );
    case 'remediate':
      return <ConditionField node={node} />;
    case 'approve':
      return <PoolField node={node} pools={props.pools} />;
    case 'reboot':
      return <RebootFields node={node} session={props.session} idempotencyKey={props.idempotencyKey} />;
    case 'purge':
      return (
        <>
          {props.allocations.length > 0 && (
            <label class="check">
              <input type="checkbox" name="force" value="yes" checked={props.typed?.force} />
              Force: release its {props.allocations.length} live allocation
              {props.allocations.length === 1 ? '' : 's'} (each recorded as force-released); without it the
              purge is refused
            </label>
          )}
          <TypeHostname hostname={node.hostname} name="hostname" />
        </>
      );
    default:
      return null;
  }
}

/** The node's live allocations, named: what the control does concerns them. */
function LiveAllocations(props: { allocations: Allocation[] }) {
  if (props.allocations.length === 0) return <p data-allocations="0">It holds no live allocation.</p>;
  return (
    <>
      <p data-allocations={String(props.allocations.length)}>
        It holds {props.allocations.length} live allocation{props.allocations.length === 1 ? '' : 's'}:
      </p>
      <AllocationTable allocations={props.allocations} />
    </>
  );
}

/** Live allocations, one row each: what holds the node, whose, placed by whom, until when. */
export function AllocationTable(props: { allocations: Allocation[] }) {
  return (
    <Table
      columns={['Allocation', 'Tenant', 'Kind', 'Placed by', 'Since', 'Ends']}
      items={props.allocations}
      row={(a) => [
        <code>{a.id}</code>,
        a.tenantId,
        a.kind,
        a.source ? `${a.source} (${a.externalId ?? 'no id'})` : 'Drydock',
        <When at={a.createdAt} />,
        a.endsAt ? <When at={a.endsAt} /> : 'open-ended',
      ]}
      empty="No live allocations."
    />
  );
}

/**
 * What a remediation does to this node: the ladder each of its true conditions would run (its
 * pool's policy, the defaults otherwise), and what happens to its live allocations — it does not
 * drain them: the actions run on the machine while the work does.
 */
function RemediateSays(props: ActionPageProps) {
  const { node, allocations } = props;
  const policy = props.pool?.policy.remediation ?? {};
  const conditions = node.conditions.filter((condition) => condition.status).map((c) => c.type);
  const ladder = (type: string) => remediationPlan(type, policy).ladder.join(', then ');
  return (
    <>
      <ul data-ladders="">
        {conditions.map((type) => (
          <li>
            {type}: {ladder(type)}
          </li>
        ))}
        <li>
          {conditions.length ? 'Another condition type' : 'A condition type'}: the pool's ladder for it, or{' '}
          {remediationPlan('').ladder.join(', then ')} by default; recorded as reported by you when the node
          did not report it.
        </li>
      </ul>
      {allocations.length === 0 ? (
        <p data-allocations="0">It holds no live allocation: no work is interrupted.</p>
      ) : (
        <div class="problem" data-allocations={String(allocations.length)}>
          <p>
            It holds {allocations.length} live allocation{allocations.length === 1 ? '' : 's'}. A remediation
            does not drain them: its actions (the ladder above) are sent to the machine while they run, and a
            reboot ends whatever runs there. They are not released: each stays live until its holder releases
            it or it ends. Drain the node first to let them end.
          </p>
          <AllocationTable allocations={allocations} />
        </div>
      )}
    </>
  );
}

/** The condition to remediate: the node's true ones offered, another type may be typed. */
function ConditionField(props: { node: Node }) {
  const { node } = props;
  const conditions = node.conditions.filter((condition) => condition.status).map((c) => c.type);
  const list = `conditions-${node.id}`;
  return (
    <label>
      Condition
      <input
        name="condition"
        list={list}
        required
        maxlength={128}
        placeholder={conditions[0] ? `e.g. ${conditions[0]}` : 'condition type, e.g. GpuXidError'}
        value={conditions.length === 1 ? conditions[0] : undefined}
      />
      <datalist id={list}>
        {conditions.map((type) => (
          <option value={type} />
        ))}
      </datalist>
    </label>
  );
}

/**
 * The pool to approve the node into: the one it asked for when it joined chosen first (the API
 * puts it there when none is sent). A node already in a pool is approved into that one.
 */
function PoolField(props: { node: Node; pools: Schemas['Pool'][] }) {
  const { node } = props;
  if (node.poolId) {
    return (
      <p>
        Into its pool <a href={`/console/pools/${node.poolId}`}>{node.poolId}</a>.
      </p>
    );
  }
  const requested = requestedPoolOf(node);
  const known = props.pools.some((pool) => pool.id === requested);
  return (
    <>
      <label>
        Pool
        <select name="poolId" required>
          {!requested && <option value="">choose a pool</option>}
          {requested && !known && (
            <option value={requested} selected>
              {requested} (asked for; no such pool now)
            </option>
          )}
          {props.pools.map((pool) => (
            <option value={pool.id} selected={pool.id === requested}>
              {pool.id}
              {pool.id === requested ? ' (asked for)' : ''}
            </option>
          ))}
        </select>
      </label>
      <p class="muted" data-requested-pool={requested ?? ''}>
        {requested
          ? `It asked for pool ${requested} when it joined.`
          : 'It asked for no pool when it joined.'}
      </p>
    </>
  );
}

/** The pool a node that joined without a token asked for, as the API says it; null when none. */
export function requestedPoolOf(node: Node): string | null {
  return node.requestedPoolId ?? null;
}

/** A verified reboot's choices: drain first (with a deadline), uncordon after, its timeouts. */
function RebootFields(props: { node: Node; session: Session; idempotencyKey: string }) {
  return (
    <>
      <input type="hidden" name="idempotencyKey" value={props.idempotencyKey} />
      <p>
        It is on boot <code>{props.node.bootId ?? 'not said yet'}</code>
        {props.node.bootedAt && (
          <>
            , booted <When at={props.node.bootedAt} />
          </>
        )}
        .
      </p>
      {mayUse(props.node, props.session, 'compute:nodes:drain') && (
        <>
          <label class="check">
            <input type="checkbox" name="drain" value="yes" />
            Drain first: its live allocations end, or are released at the deadline (a failed drain stops the
            reboot)
          </label>
          <label>
            Drain deadline
            <input name="deadline" placeholder="2h, or a time; empty: wait" maxlength={64} />
          </label>
        </>
      )}
      <label class="check">
        <input type="checkbox" name="uncordon" value="yes" />
        Uncordon once verified
      </label>
      <label>
        Reboot timeout
        <input name="rebootTimeout" placeholder="default 15m" maxlength={16} />
      </label>
      <label>
        Healthy after
        <input
          name="healthyAfter"
          placeholder="default 60s: how long every probe holds healthy"
          maxlength={16}
        />
      </label>
    </>
  );
}

import type { Schemas } from '@drydock/client';
import type { Child } from 'hono/jsx';
import { Csrf, Layout } from '../layout';
import { Progress } from '../progress';
import { rollingOf } from '../rolling';
import type { Flash, Session } from '../sessions';
import { StatusBadge } from '../badge';
import { When } from '../time';
import { ChildrenChoice, type Back } from './rolling-maintenance';

type Operation = Schemas['Operation'];
type Node = Schemas['Node'];
type DecommissionProgress = Extract<Schemas['OperationProgress'], { kind: 'decommission' }>;
type DrainProgress = Extract<Schemas['OperationProgress'], { kind: 'drain' }>;
type RemediationProgress = Extract<Schemas['OperationProgress'], { kind: 'remediation' }>;
type PoolDrainProgress = Extract<Schemas['OperationProgress'], { kind: 'pool-drain' }>;

/** What a cancel confirmation shows: the operation, its node (when it has one), and what a pool op reached. */
export interface CancelView {
  session: Session;
  flash?: Flash;
  operation: Operation;
  /** The node it works on, as the key reads it; null when it has none or it could not be read. */
  node: Node | null;
  back: Back;
  /** The API refused the cancel just asked: its words, shown at the top; nothing changed. */
  refused?: string;
}

export const isOpen = (op: Operation) => op.status === 'pending' || op.status === 'running';

/**
 * Whether the API still takes a cancel of this operation: it is open, and a decommission has not
 * passed its point of no return (its first clean-up step, revoking the node's identity, began).
 * The API decides; this only spares offering a button it would refuse.
 */
export function cancellable(op: Operation): boolean {
  if (!isOpen(op)) return false;
  if (op.kind !== 'decommission') return true;
  return pastNoReturn(op).length === 0;
}

/** The clean-up steps of a decommission already done (none: it may still be cancelled). */
function pastNoReturn(op: Operation): string[] {
  const progress = op.progress as DecommissionProgress;
  if (op.status === 'pending') return [];
  return progress.waitingFor?.stepsDone ?? [];
}

/** The operation's kind in words, as its cancel button and page title say it. */
export const KIND_WORDS: Record<Operation['kind'], string> = {
  drain: 'drain',
  remediation: 'remediation',
  decommission: 'decommission',
  purge: 'purge',
  maintenance: 'maintenance',
  'pool-drain': 'pool drain',
  'pool-maintenance': 'rolling maintenance',
};

/** Where "back, without cancelling" goes: the pool's page, or the operation's. */
export function backHref(back: Back, op: Operation): string {
  return back === 'operation'
    ? `/console/operations/${op.id}`
    : `/console/pools/${back.slice('pool:'.length)}`;
}

/**
 * The confirmation before any operation is cancelled (`DELETE /v1/operations/{id}`): what it is,
 * what the cancel puts back for its kind and what it leaves as it is, a reason, and for a pool
 * drain or a rolling maintenance the choice for its running node operations. Nothing is asked of
 * the API until its form is sent. One past cancelling (finished, or a decommission past its point
 * of no return) says why, with no form.
 */
export function CancelPage(props: CancelView) {
  const { operation: op, node } = props;
  const what = KIND_WORDS[op.kind];
  const host = node?.hostname ?? op.nodeId;
  const flash: Flash | undefined = props.refused
    ? { kind: 'error', text: `Cancel refused: ${props.refused}. Nothing was changed.` }
    : props.flash;
  return (
    <Layout title={`Cancel ${what} ${op.id}`} session={props.session} flash={flash}>
      <h1>
        Cancel {what} <code>{op.id}</code>
      </h1>
      <p data-cancel-of={op.kind}>
        <StatusBadge status={op.status} /> on{' '}
        {op.nodeId ? (
          <a href={`/console/nodes/${op.nodeId}`} title={op.nodeId}>
            {host}
          </a>
        ) : (
          <a href={`/console/pools/${op.poolId}`}>pool {op.poolId}</a>
        )}{' '}
        · asked by <span class="actor">{op.actor}</span> · <When at={op.createdAt} />
        {op.reason ? ` · ${op.reason}` : ''}
      </p>
      <Progress operation={op} />
      {!isOpen(op) ? (
        <p class="cancel-refusal" role="status" data-cannot-cancel="">
          This {what} already {op.status}: there is nothing to cancel, and nothing was changed.
        </p>
      ) : !cancellable(op) ? (
        <p class="cancel-refusal" role="status" data-cannot-cancel="">
          This decommission is past its point of no return ({pastNoReturn(op).join(', ')} done: the node's
          identity is revoked). It runs to its end; the API refuses to cancel it.
        </p>
      ) : (
        <>
          <h2>What the cancel does</h2>
          <ul class="confirm-says" data-puts-back={op.kind}>
            <PutsBack operation={op} node={node} host={host ?? ''} />
          </ul>
          <p class="muted">Nothing changes until you confirm.</p>
          <form method="post" action={`/console/operations/${op.id}/cancel`} class="controls cancel-form">
            <Csrf session={props.session} />
            <input type="hidden" name="confirm" value="yes" />
            <input type="hidden" name="back" value={props.back} />
            {op.kind === 'pool-drain' && <ChildrenChoice running="node drains running now" />}
            {op.kind === 'pool-maintenance' && <ChildrenChoice running="node maintenances running now" />}
            <label>
              reason
              <input name="reason" placeholder="why (recorded with the cancel)" maxlength={256} size={32} />
            </label>
            <button type="submit">Cancel {what}</button>
          </form>
        </>
      )}
      <p>
        <a href={backHref(props.back, op)}>Back, without cancelling</a>
      </p>
    </Layout>
  );
}

/** What a cancel of this kind puts back, and what it leaves as it is, in words (db/cancellation.ts). */
function PutsBack(props: { operation: Operation; node: Node | null; host: string }): Child {
  const { operation: op, node, host } = props;
  switch (op.kind) {
    case 'drain': {
      const w = (op.progress as DrainProgress).waitingFor;
      return (
        <>
          <li>
            <strong>Draining comes off</strong> {host}: the drain stops waiting for its allocations, and
            nothing is released by force at its deadline
            {w && w.allocations > 0
              ? ` (the ${w.allocations} live allocation${w.allocations === 1 ? '' : 's'} keep running)`
              : ''}
            .
          </li>
          <li>
            <strong>The node stays cordoned</strong>: no new work is placed there until someone uncordons it.
          </li>
          <li>
            <strong>Its slot in the pool's disruption budget is given up</strong> (held or waited for), for
            another node's drain.
          </li>
        </>
      );
    }
    case 'remediation': {
      const w = (op.progress as RemediationProgress).waitingFor;
      return (
        <>
          <li>
            <strong>The remediation stops</strong>
            {w ? ` at attempt ${w.attempt} of at most ${w.ladder.length} (${w.condition})` : ''}: no further
            action of its ladder runs.
          </li>
          <li>
            <strong>{host} is escalated to maintenance</strong>, as any remediation that ends unhealed: it
            takes no new work until someone clears its maintenance.
          </li>
          <li>The condition stays as the node last reported it.</li>
        </>
      );
    }
    case 'decommission': {
      const from = (op.result as { admittedFrom?: string } | null)?.admittedFrom;
      return (
        <>
          <li>
            <strong>Decommissioning is undone</strong>: {host} goes back to{' '}
            {from ? (
              <>
                <code>{from}</code>, the state it was admitted from
              </>
            ) : (
              'the state it was admitted from'
            )}
            . None of the clean-up has run yet.
          </li>
          <li>
            Only before its point of no return: once the node's identity is revoked (its first clean-up step),
            the API refuses the cancel and the decommission runs to its end.
          </li>
        </>
      );
    }
    case 'purge':
      return (
        <>
          <li>
            <strong>The purge command is withdrawn</strong> if {host} has not taken it yet.
          </li>
          <li>
            <strong>The node stays purging</strong>: out of placement. Purge it again, or delete it.
          </li>
          <li>
            A purge the node already acknowledged is past cancelling: the node is forgotten and the purge ends
            succeeded.
          </li>
        </>
      );
    case 'maintenance':
      return (
        <>
          <li>
            <strong>Its drain is cancelled</strong> (draining comes off {host}), and{' '}
            <strong>its commands the node has not started are withdrawn</strong>; a command already running
            there is left to report.
          </li>
          <li>
            <strong>The node stays cordoned</strong>
            {node?.maintenance ? ' and in maintenance' : ''}: uncordon it
            {node?.maintenance ? ' and clear its maintenance' : ''} once you decided.
          </li>
        </>
      );
    case 'pool-drain': {
      const w = (op.progress as PoolDrainProgress).waitingFor;
      return (
        <>
          <li>
            <strong>No other node of pool {op.poolId} starts draining</strong>
            {w ? ` (${w.counts.pending} not started yet)` : ''}.
          </li>
          <li>
            The node drains running now{w ? ` (${w.counts.draining + w.counts.waitingForBudget})` : ''}{' '}
            finish, or are cancelled too if you choose so: a cancelled one takes draining off its node, which
            stays cordoned.
          </li>
          <li>Nothing is put back: the nodes it drained stay cordoned until someone uncordons them.</li>
        </>
      );
    }
    case 'pool-maintenance':
      return <RollingPutsBack operation={op} />;
  }
}

/** A rolling maintenance: no other node starts, the running ones finish or stop, nothing is put back. */
function RollingPutsBack(props: { operation: Operation }) {
  const w = rollingOf(props.operation);
  const reached = w?.nodes.filter((n) => n.operationId) ?? [];
  const running = reached.filter((n) => n.status === 'running');
  // A node maintenance that succeeded gave its node back (when its plan uncordons); the others hold it.
  const held = reached.filter((n) => n.status !== 'succeeded');
  const hosts = (nodes: typeof reached) => nodes.map((n) => n.hostname ?? n.nodeId).join(', ');
  return (
    <>
      <li>
        <strong>No other node starts</strong>: the {w?.counts.pending ?? 0} node
        {w?.counts.pending === 1 ? '' : 's'} not started yet are left as they are.
      </li>
      <li>
        The node maintenances running now ({running.length ? hosts(running) : 'none'}) finish, or are
        cancelled too if you choose so: a cancelled one stops at its step.
      </li>
      <li>
        Nothing is put back: the nodes it reached and did not finish stay cordoned (
        {held.length ? hosts(held) : 'none'}), and those whose maintenance failed stay in maintenance:
        uncordon them, or clear their maintenance, once you decided.
      </li>
    </>
  );
}

/** The flash after a cancel: what it did to the node, in the words the confirmation used. */
export function cancelledInWords(op: Operation, host: string | null, children?: 'finish' | 'cancel'): string {
  const what = KIND_WORDS[op.kind];
  const on = host ?? op.nodeId ?? '';
  switch (op.kind) {
    case 'drain':
      return `Drain ${op.id} cancelled: draining came off ${on}, which stays cordoned.`;
    case 'remediation':
      return `Remediation ${op.id} cancelled: ${on} was escalated to maintenance.`;
    case 'decommission':
      return `Decommission ${op.id} cancelled: ${on} is back in the state it was admitted from.`;
    case 'purge':
      return `Purge ${op.id} cancelled: its command was withdrawn; ${on} stays purging.`;
    case 'maintenance':
      return `Maintenance ${op.id} cancelled: its drain and pending commands were withdrawn; ${on} stays cordoned.`;
    case 'pool-drain':
    case 'pool-maintenance':
      return `${what[0]!.toUpperCase()}${what.slice(1)} ${op.id} cancelled; the node ${
        op.kind === 'pool-drain' ? 'drains' : 'maintenances'
      } running ${children === 'cancel' ? 'were cancelled too' : 'finish'}.`;
  }
}

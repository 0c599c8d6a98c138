import { randomUUID } from 'node:crypto';
import type { Schemas } from '@drydock/client';
import { Csrf, Table } from '../layout';
import { Progress } from '../progress';
import { rollingOf, type Rolling, type RollingWaitingFor } from '../rolling';
import type { Session } from '../sessions';
import {
  MaintenanceTimeline,
  stepsOfMaintenance,
  type TimelineRow,
  type TimelineStep,
} from './maintenance-timeline';
import { StatusBadge } from '../badge';
import { When } from '../time';

type Operation = Schemas['Operation'];
type ListedNode = RollingWaitingFor['nodes'][number];

/** Where a control's answer goes back to: the pool's page (`pool:<id>`), or the operation's own. */
export type Back = `pool:${string}` | 'operation';

const isOpen = (op: Operation) => op.status === 'pending' || op.status === 'running';

/**
 * A rolling maintenance (`pool-maintenance`): its progress in words, whether it is paused, the
 * counts per step, the failures with their reasons and their failed step's output, and one
 * timeline row per node it reached. Operators get Resume (paused) and Cancel (open).
 */
export function RollingMaintenance(props: {
  rolling: Rolling;
  session: Session;
  /** Resume and cancel are offered (operator keys). */
  controls: boolean;
  back: Back;
}) {
  const { operation: op, children } = props.rolling;
  const w = rollingOf(op);
  const open = isOpen(op);
  return (
    <div class="rolling" data-rolling={op.id}>
      <p>
        <span data-rolling-state="">
          {w?.paused && open ? (
            <StatusBadge status="paused" text="Paused" />
          ) : (
            <StatusBadge status={op.status} />
          )}
        </span>{' '}
        <a href={`/console/operations/${op.id}`}>
          <code>{op.id}</code>
        </a>{' '}
        · asked by {op.actor} · <When at={op.createdAt} />
        {op.reason ? ` · ${op.reason}` : ''}
      </p>
      <Progress operation={op} />
      {w && w.paused && open && (
        <p class="paused-banner" role="status" data-paused="">
          Paused at {w.failuresSinceResume} failed of at most {w.maxFailures}: the running nodes finish, no
          other starts until it is resumed or cancelled.
        </p>
      )}
      {props.controls && open && (
        <Controls operation={op} waitingFor={w} session={props.session} back={props.back} />
      )}
      {w && (
        <>
          <StepCounts waitingFor={w} />
          <Failures nodes={w.nodes} children={children} />
          <h3>Nodes</h3>
          <MaintenanceTimeline rows={w.nodes.map((node) => rowOf(node, w.steps, children))} />
          {w.counts.pending > 0 && (
            <p class="muted">
              {w.counts.pending} node{w.counts.pending === 1 ? '' : 's'} not started yet.
            </p>
          )}
          {w.nodes.length < w.counts.running + w.counts.succeeded + w.counts.failed + w.counts.cancelled && (
            <p class="muted">Only the first {w.nodes.length} nodes are listed; the counts are exact.</p>
          )}
        </>
      )}
    </div>
  );
}

/** Resume (paused) and the way to Cancel (its confirmation page). */
function Controls(props: {
  operation: Operation;
  waitingFor: RollingWaitingFor | null;
  session: Session;
  back: Back;
}) {
  const { operation: op } = props;
  return (
    <div class="controls">
      {props.waitingFor?.paused && (
        <form method="post" action={`/console/operations/${op.id}/resume`} class="inline">
          <Csrf session={props.session} />
          <input type="hidden" name="back" value={props.back} />
          <input name="reason" placeholder="reason" required maxlength={256} size={24} />
          <button type="submit">Resume</button>
        </form>
      )}
      <form method="get" action={`/console/operations/${op.id}/cancel`} class="inline">
        <input type="hidden" name="back" value={props.back} />
        <button type="submit">Cancel rolling maintenance…</button>
      </form>
    </div>
  );
}

/** How many nodes run each step now and are done with it, in the plan's order. */
function StepCounts(props: { waitingFor: RollingWaitingFor }) {
  const w = props.waitingFor;
  const { pending, running, succeeded, failed, cancelled } = w.counts;
  return (
    <>
      <p data-counts="">
        {succeeded} succeeded · {running} running · {pending} pending · {failed} failed · {cancelled}{' '}
        cancelled · at most {w.maxConcurrent} at a time, pausing at {w.maxFailures} failed
      </p>
      <Table
        columns={['Step', 'Running it now', 'Done with it']}
        items={w.steps.map((step, i) => ({ step, at: w.atStep[i] ?? 0, done: w.doneStep[i] ?? 0 }))}
        row={(s) => [<code>{s.step}</code>, s.at, s.done]}
        empty=""
      />
    </>
  );
}

/** The nodes whose maintenance failed or was cancelled: why, and the output of the step that failed. */
function Failures(props: { nodes: ListedNode[]; children: Map<string, Operation> }) {
  const failed = props.nodes.filter((n) => n.status === 'failed' || n.status === 'cancelled');
  if (failed.length === 0) return null;
  return (
    <>
      <h3>Failures</h3>
      <ul class="failures">
        {failed.map((node) => {
          const child = node.operationId ? props.children.get(node.operationId) : undefined;
          const step = child ? stepsOfMaintenance(child).find((s) => s.state === 'failed') : undefined;
          return (
            <li data-failed-node={node.nodeId}>
              <a href={`/console/nodes/${node.nodeId}`}>{node.hostname ?? node.nodeId}</a>{' '}
              <StatusBadge status={node.status} />
              {node.step ? (
                <>
                  {' '}
                  at <code>{node.step}</code>
                </>
              ) : (
                ' before it began'
              )}
              : <span class="timeline-reason">{node.reason ?? node.status}</span>
              {step?.href && (
                <>
                  {' '}
                  · <a href={step.href}>{step.href.includes('/commands/') ? 'its output' : 'its drain'}</a>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </>
  );
}

/** A node's row: its hostname (linked), its status in words, and its maintenance's steps. */
function rowOf(node: ListedNode, plan: string[], children: Map<string, Operation>): TimelineRow {
  const child = node.operationId ? children.get(node.operationId) : undefined;
  const recorded = child ? stepsOfMaintenance(child) : [];
  const steps: TimelineStep[] = recorded.length
    ? recorded
    : plan.map((step) => ({ step, state: 'not started', startedAt: null, endedAt: null }));
  return {
    label: (
      <span data-node-row={node.nodeId}>
        <a href={`/console/nodes/${node.nodeId}`}>{node.hostname ?? node.nodeId}</a>{' '}
        <StatusBadge status={node.status} />
        {node.operationId && (
          <>
            {' '}
            ·{' '}
            <a href={`/console/operations/${node.operationId}`} class="muted">
              its maintenance
            </a>
          </>
        )}
      </span>
    ),
    steps,
  };
}

/** Start a rolling maintenance on the pool (`POST /v1/pools/{id}/maintenance`). */
export function RollingForm(props: { poolId: string; session: Session }) {
  return (
    <form method="post" action={`/console/pools/${props.poolId}/maintenance`} class="rolling-form">
      <Csrf session={props.session} />
      <input type="hidden" name="idempotencyKey" value={`console-pool-maintenance-${randomUUID()}`} />
      <label>
        nodes with labels
        <input name="selector" placeholder="rack=b7 (empty: every node)" size={24} maxlength={4096} />
      </label>
      <label>
        steps, one a line
        <textarea
          name="steps"
          rows={5}
          cols={28}
          required
          placeholder={'drain:2h\nrun:driver-upgrade\nreboot\nverify\nuncordon'}
        />
      </label>
      <label>
        at most at once
        <input name="maxConcurrent" type="number" min={1} max={1000} placeholder="1" size={6} />
      </label>
      <label>
        pause at failed
        <input name="maxFailures" type="number" min={1} max={1000} placeholder="1" size={6} />
      </label>
      <label>
        reboot timeout
        <input name="rebootTimeout" placeholder="15m (default)" size={10} maxlength={16} />
      </label>
      <label>
        healthy for
        <input name="healthyAfter" placeholder="60s (default)" size={10} maxlength={16} />
      </label>
      <label>
        verify timeout
        <input name="verifyTimeout" placeholder="10m (default)" size={10} maxlength={16} />
      </label>
      <label>
        reason
        <input name="reason" placeholder="required" required maxlength={256} size={24} />
      </label>
      <button type="submit">Start rolling maintenance</button>
      <p class="muted">
        Steps: <code>drain</code> or <code>drain:2h</code>, <code>run:&lt;action&gt;</code> or{' '}
        <code>run:driver-upgrade:version=570</code> (its parameters), <code>reboot</code>, <code>verify</code>{' '}
        or <code>verify:&lt;action&gt;</code>, <code>uncordon</code>. A drain step needs{' '}
        <code>compute:nodes:drain</code> too.
      </p>
    </form>
  );
}

/** The choice a cancel of a pool drain or a rolling maintenance gives: its running node operations finish, or are cancelled too. */
export function ChildrenChoice(props: { running: string }) {
  return (
    <label>
      {props.running}
      <select name="children">
        <option value="finish">let them finish</option>
        <option value="cancel">cancel them too</option>
      </select>
    </label>
  );
}

import type { Schemas } from '@drydock/client';
import type {
  DecommissionProgress,
  DrainProgress,
  PoolDrainProgress,
  PurgeProgress,
  RemediationProgress,
} from '../workflows/definitions';

/**
 * An operation's progress, as its workflow answers `progress` (the fields differ per kind): in
 * words where the kind and shape are known, else each top-level field on a line of its own; "—"
 * when the workflow could not be asked.
 */
export function Progress(props: { operation: Schemas['Operation'] }) {
  const { kind, progress } = props.operation;
  if (progress === undefined || progress === null) return <span class="muted">—</span>;
  if (typeof progress !== 'object' || Array.isArray(progress)) return <code>{JSON.stringify(progress)}</code>;
  const words = progressInWords(kind, progress as Record<string, unknown>);
  if (words) {
    return (
      <p class="progress" data-progress={kind}>
        {words}
      </p>
    );
  }
  return (
    <dl class="progress">
      {Object.entries(progress).map(([name, value]) => (
        <>
          <dt>{name}</dt>
          <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
        </>
      ))}
    </dl>
  );
}

/** The progress of an operation of `kind` in words, or undefined when its shape is not the known one. */
export function progressInWords(kind: string, p: Record<string, unknown>): string | undefined {
  const has = (...fields: string[]) => fields.every((f) => f in p);
  if (kind === 'drain' && has('phase', 'liveAllocationCount'))
    return drainInWords(p as unknown as DrainProgress);
  if (kind === 'decommission' && has('phase', 'stepsDone'))
    return decommissionInWords(p as unknown as DecommissionProgress);
  if (kind === 'purge' && has('phase', 'waitingSince')) return purgeInWords(p as unknown as PurgeProgress);
  if (kind === 'remediation' && has('phase', 'attempt', 'ladder'))
    return remediationInWords(p as unknown as RemediationProgress);
  if (kind === 'pool-drain' && has('phase', 'counts', 'maxConcurrent'))
    return poolDrainInWords(p as unknown as PoolDrainProgress);
  return undefined;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** What a drain is doing, in one sentence. */
export function drainInWords(p: DrainProgress): string {
  const waiting = `Waiting for ${plural(p.liveAllocationCount, 'live allocation')}`;
  switch (p.phase) {
    case 'starting':
      return 'Starting.';
    case 'waiting':
      return p.deadline
        ? `${waiting} until ${p.deadline}; then they are force-released within the pool's disruption budget.`
        : `${waiting} to end; no deadline.`;
    case 'waiting-for-budget': {
      const budget = p.budget
        ? ` (budget ${p.budget.used} of ${p.budget.max} nodes unavailable${p.budget.holders.length ? `: ${p.budget.holders.join(', ')}` : ''})`
        : '';
      return `Past the deadline: ${waiting.toLowerCase()}, waiting for a slot in the pool's disruption budget${budget} to force-release them.`;
    }
    case 'drained':
      return 'Drained: the node holds nothing.';
    case 'cancelled':
      return 'Cancelled.';
    case 'failed':
      return 'Failed.';
  }
}

const DECOMMISSION_STEP_WORDS: Record<string, string> = {
  revokeNodeIdentity: 'revoking the node identity',
  decommissionAccelerators: 'decommissioning accelerators',
  protectStorageRoots: 'protecting storage roots',
  removeCurrentRows: 'removing current rows',
  finalizeDecommission: 'finalizing',
};
const DECOMMISSION_STEPS_TOTAL = Object.keys(DECOMMISSION_STEP_WORDS).length;

/** What a decommission is doing: its phase, the step it is at, how many steps are done. */
export function decommissionInWords(p: DecommissionProgress): string {
  const done = `${p.stepsDone.length} of ${DECOMMISSION_STEPS_TOTAL} steps done`;
  switch (p.phase) {
    case 'starting':
      return 'Starting.';
    case 'cleaning-up':
      return `Cleaning up: ${p.step ? (DECOMMISSION_STEP_WORDS[p.step] ?? p.step) : 'between steps'}; ${done}.`;
    case 'decommissioned':
      return `Decommissioned: ${done}.`;
    case 'refused':
      return 'Refused: nothing was changed.';
    case 'failed':
      return `Failed${p.step ? ` at ${DECOMMISSION_STEP_WORDS[p.step] ?? p.step}` : ''}; ${done}.`;
  }
}

/** What a purge is doing: waiting for the node since when, or the node's answer. */
export function purgeInWords(p: PurgeProgress): string {
  const command = p.commandId ? ` (command ${p.commandId})` : '';
  switch (p.phase) {
    case 'starting':
      return 'Starting.';
    case 'waiting-for-node':
      return `Waiting for the node to take the purge command${command}${p.waitingSince ? ` since ${p.waitingSince}` : ''}.`;
    case 'refused':
      return `The node refused the purge command${command}: ${p.refusedReason ?? 'no reason given'}.`;
    case 'purged':
      return `Purged: the node acknowledged the command${command}.`;
    case 'cancelled':
      return 'Cancelled.';
    case 'failed':
      return 'Failed.';
  }
}

/** What a remediation is doing: the rung of its ladder, the action, until when; what is queued. */
export function remediationInWords(p: RemediationProgress): string {
  const condition = p.condition ?? 'its condition';
  const queued = p.queued.length ? ` Queued after it: ${p.queued.join(', ')}.` : '';
  const ladder = p.ladder.length ? ` (ladder ${p.ladder.join(' → ')})` : '';
  switch (p.phase) {
    case 'starting':
      return `Starting on ${condition}.${queued}`;
    case 'attempting':
      return (
        `Remediating ${condition}: attempt ${p.attempt} of at most ${p.ladder.length}${ladder}, ` +
        `${p.action ?? 'no action'}; waiting for ${condition} to clear` +
        `${p.attemptDeadline ? ` until ${p.attemptDeadline}` : ''}.${queued}`
      );
    case 'succeeded':
      return `Succeeded: ${condition} cleared after ${plural(p.attempt, 'attempt')}.${queued}`;
    case 'escalated':
      return `Escalated to maintenance: ${condition} did not clear after ${plural(p.attempts.length, 'attempt')}${ladder}.${queued}`;
    case 'cancelled':
      return `Cancelled.${queued}`;
  }
}

/** What a pool drain is doing: the nodes per state, how many at a time, the deadline. */
export function poolDrainInWords(p: PoolDrainProgress): string {
  const c = p.counts;
  const counts =
    `${c.pending} pending, ${c.draining} draining, ${c.waitingForBudget} waiting for the budget, ` +
    `${c.drained} drained, ${c.failed} failed`;
  const deadline = !p.deadline
    ? 'no deadline'
    : 'at' in p.deadline
      ? `deadline ${p.deadline.at}`
      : `deadline ${p.deadline.after} after each node's drain starts`;
  const phase = p.phase === 'draining' ? 'Draining' : p.phase.charAt(0).toUpperCase() + p.phase.slice(1);
  return `${phase}: ${counts}; at most ${p.maxConcurrent} at a time; ${deadline}.`;
}

import type { Schemas } from '../client';
import type { DrainProgress } from '../workflows/definitions';

/**
 * An operation's progress, as its workflow answers `progress` (the fields differ per kind): in
 * words where the kind is known, else each top-level field on a line of its own; "—" when the
 * workflow could not be asked.
 */
export function Progress(props: { operation: Schemas['Operation'] }) {
  const { kind, progress } = props.operation;
  if (progress === undefined || progress === null) return <span class="muted">—</span>;
  if (typeof progress !== 'object' || Array.isArray(progress)) return <code>{JSON.stringify(progress)}</code>;
  if (kind === 'drain' && 'liveAllocationCount' in progress) {
    return <p class="progress">{drainInWords(progress as DrainProgress)}</p>;
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
        ? `${waiting} until ${p.deadline}; then they are released within the pool's disruption budget.`
        : `${waiting} to end; no deadline.`;
    case 'waiting-for-budget':
      return `Past the deadline: ${waiting.toLowerCase()}, released as the pool's disruption budget frees a slot.`;
    case 'drained':
      return 'Drained: the node holds nothing.';
    case 'cancelled':
      return 'Cancelled.';
    case 'failed':
      return 'Failed.';
  }
}

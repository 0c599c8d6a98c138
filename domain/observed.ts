/**
 * Observed allocations: work a scheduler already placed (a Slurm job, a Kubernetes pod), recorded by
 * its bridge so that drains see it. Drydock did not place it, so its placement rule does not refuse
 * it; the refusals it would have made are kept with the record, for the operator to see.
 */

/** The scheduler that placed the work: `<scheduler>:<cluster>`, e.g. `slurm:hpc1`. */
export const SOURCE_PATTERN = /^[a-z][a-z0-9-]{0,31}:[a-z0-9][a-z0-9._-]{0,62}$/;

/**
 * The scheduler's own id of the work, as it lists it: a Slurm job (`4711`, an array task `4711_3`, a
 * het job component `4711+1`), a Kubernetes pod (`namespace/name/uid`).
 */
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:+/-]{0,252}$/;

/**
 * How a scheduler ends work a drain asks it to end: back in its queue (`requeue`), or for good
 * (`cancel`) — Slurm, at the deadline; asked politely, as a disruption budget of its own allows
 * (`evict`, Kubernetes' Eviction API, from the drain's start), or at once (`delete`, at the deadline).
 */
export const ENDING_ACTIONS = ['requeue', 'cancel', 'evict', 'delete'] as const;
export type EndingAction = (typeof ENDING_ACTIONS)[number];

/** How an answer says the scheduler refused (a PodDisruptionBudget, a job that cannot be requeued). */
export const REFUSED = 'refused: ';

/**
 * What a bridge records before it first asks the scheduler to end work a given way, replaced by the
 * answer once it comes: a bridge stopped in between leaves this, not nothing, and the ask counts as
 * made (asked again after a while, so work a scheduler ended is not ended twice).
 */
export const ASKING = 'asking: no answer recorded yet';

/**
 * Whether a newly recorded answer changes what a drain waiting for the work would say of it: the
 * scheduler now refuses, or now accepts, where it did not. An ask under way (ASKING) and a refusal
 * in other words (a budget's counts moved) do not: the drain's next look shows them.
 */
export function answerTurned(previous: string | null, answer: string): boolean {
  if (answer === ASKING) return false;
  const refused = answer.startsWith(REFUSED);
  return previous === null || previous === ASKING || previous.startsWith(REFUSED) !== refused;
}

/** What a scheduler answered when asked to end work, as its bridge recorded it. */
export interface Ending {
  action: EndingAction;
  answer: string;
  at: string;
}

/**
 * Why a scheduler's answer cannot be recorded on an allocation, or null when it can: only on live
 * work a scheduler placed, on a node a drain is draining (a scheduler may ask politely from the
 * drain's start) or whose end a drain's deadline asked for (`endRequestedAt`).
 */
export function endingRefusal(allocation: {
  id: string;
  source: string | null;
  endRequestedAt: Date | null;
  live: boolean;
  /** Its node is draining: a drain is open there. */
  draining: boolean;
}): string | null {
  if (allocation.source === null) {
    return `allocation ${allocation.id} was placed through Drydock, not observed: no scheduler ends it`;
  }
  if (!allocation.live) return `allocation ${allocation.id} is released (or past its end): its work is over`;
  if (allocation.endRequestedAt === null && !allocation.draining) {
    return `no end of allocation ${allocation.id} is due from ${allocation.source}: no drain is open on its node and none asked its end`;
  }
  return null;
}

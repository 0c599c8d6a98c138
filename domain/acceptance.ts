/**
 * Acceptance: the checks an `adopting` node passes before it is `adopted` (docs/lifecycle/
 * enrollment.md#acceptance). The pool's plan (`policy.acceptance`) names an optional action its
 * agent runs as a `run` command; the probes' conditions, access and liveness are checked when the
 * action has passed (or at once, without one). A failure is the NoSchedule reason
 * `acceptance:<check>` on the node, until an adopt runs acceptance again.
 */
import type { CommandStatus } from './command-status';
import type { NodeAxes } from './node';

/** Who runs acceptance: the actor of its events and the `requestedBy` of its command. */
export const ACCEPTANCE_ACTOR = 'system:acceptance';

/** A pool's acceptance plan (`policy.acceptance`). */
export interface AcceptancePolicy {
  /** An action configured on the node's agent that must exit 0 (burn-in, topology, NCCL loopback). */
  action?: string;
  /** How long its command waits for the agent to take it before it expires (default 1h). */
  expiresIn?: string;
}

export const DEFAULT_ACCEPTANCE_EXPIRES_IN = '1h';

/** The checks acceptance makes, each the `<check>` of its NoSchedule reason `acceptance:<check>`. */
export const ACCEPTANCE_CHECKS = ['access', 'liveness', 'conditions', 'action'] as const;
export type AcceptanceCheck = (typeof ACCEPTANCE_CHECKS)[number];

export const ACCEPTANCE_PREFIX = 'acceptance:';

/** A check that failed, and why in words. */
export interface AcceptanceFailure {
  check: AcceptanceCheck;
  reason: string;
}

export const isAcceptanceReason = (reason: string) => reason.startsWith(ACCEPTANCE_PREFIX);

/** The node's NoSchedule reasons without any acceptance failure. */
export const withoutAcceptanceReasons = (reasons: string[]) => reasons.filter((r) => !isAcceptanceReason(r));

/** The node's own checks: access allowed, liveness alive, no `condition:*` true (its probes healthy). */
export function nodeCheckFailures(
  node: Pick<NodeAxes, 'access' | 'liveness' | 'noScheduleReasons'>,
): AcceptanceFailure[] {
  const failures: AcceptanceFailure[] = [];
  if (node.access !== 'allowed') failures.push({ check: 'access', reason: 'access is blocked' });
  if (node.liveness !== 'alive') failures.push({ check: 'liveness', reason: `liveness is ${node.liveness}` });
  const conditions = node.noScheduleReasons.filter((r) => r.startsWith('condition:'));
  if (conditions.length > 0) {
    failures.push({
      check: 'conditions',
      reason: `${conditions.join(', ')} ${conditions.length > 1 ? 'are' : 'is'} true`,
    });
  }
  return failures;
}

/** Why the acceptance action's command did not pass, in words; null when it succeeded. */
export function actionFailure(command: {
  action: string | null;
  status: CommandStatus;
  exitCode: number | null;
  refuseReason: string | null;
}): AcceptanceFailure | null {
  const action = command.action ?? 'acceptance';
  const because = command.refuseReason ? `: ${command.refuseReason}` : '';
  switch (command.status) {
    case 'succeeded':
      return null;
    case 'failed':
      return {
        check: 'action',
        reason:
          command.exitCode === null
            ? `${action} failed${because}`
            : `${action} exited ${command.exitCode}${because}`,
      };
    case 'refused':
      return { check: 'action', reason: `the agent refused ${action}${because}` };
    case 'returned':
      return { check: 'action', reason: `${action} did not finish: the agent started again while it ran` };
    case 'expired':
      return { check: 'action', reason: `no agent took ${action} before it expired` };
    case 'cancelled':
      return { check: 'action', reason: `${action} was withdrawn before the node ran it` };
    default:
      return null;
  }
}

/** The NoSchedule reasons a node's failures leave: its others, then `acceptance:<check>` for each. */
export function reasonsWithFailures(reasons: string[], failures: AcceptanceFailure[]): string[] {
  return [...withoutAcceptanceReasons(reasons), ...failures.map((f) => `${ACCEPTANCE_PREFIX}${f.check}`)];
}

import { assertNever } from './assert-never';

/** A node's provision state: where it is on its way in, through service and out (docs/concepts.md). */
export const PROVISION_STATES = [
  'pending',
  'enrolling',
  'adopting',
  'adopted',
  'rejected',
  'failed',
  'retired',
  'purging',
  'decommissioning',
  'decommissioned',
] as const;
export type ProvisionState = (typeof PROVISION_STATES)[number];

/**
 * The moves of the provision state, each named for the control or step that makes it. A `purge`
 * or `decommission` of a node already `purging` or `decommissioning` (its earlier one failed) is
 * a move too: the operation starts again.
 */
export const PROVISION_MOVES = [
  'approve',
  'reject',
  'accept',
  'readopt',
  'purge',
  'decommission',
  'finish-decommission',
] as const;
export type ProvisionMove = (typeof PROVISION_MOVES)[number];

/** Which agent routes a node may call: none, only heartbeats and the command long-poll, or all. */
export type AgentAdmission = 'none' | 'wait' | 'full';

/** What a node in one provision state may do and have done to it. */
export interface ProvisionRules {
  /** The moves that may leave this state. */
  moves: readonly ProvisionMove[];
  /**
   * Agent routes. Not yet admitted (`wait`): heartbeats and the command long-poll, so an operator
   * sees it is alive while deciding, but nothing it says (conditions, command answers) starts or
   * steers work on a machine nobody approved. Turned away or gone (`none`): nothing. Every other
   * state (`full`): acceptance needs its condition reports, purge and decommission its answers.
   */
  agent: AgentAdmission;
  /** Whether a DELETE may tombstone it: always, never, or once it is cordoned. */
  delete: 'yes' | 'no' | 'cordoned';
  /** Whether placement may put new work on it. */
  placeable: boolean;
  /** No control moves it any more. */
  terminal: boolean;
}

const LEAVING: readonly ProvisionMove[] = ['purge', 'decommission'];

/** The provision state machine, one row a state. */
export function provisionRules(state: ProvisionState): ProvisionRules {
  return RULES[state] ?? assertNever(state as never);
}

function rulesOf(state: ProvisionState): ProvisionRules {
  const row = (moves: readonly ProvisionMove[], agent: AgentAdmission, del: ProvisionRules['delete']) =>
    Object.freeze({
      moves: Object.freeze([...moves]),
      agent,
      delete: del,
      placeable: state === 'adopted',
      terminal: moves.length === 0,
    });
  switch (state) {
    case 'pending':
      return row(['approve', 'reject', ...LEAVING], 'wait', 'yes');
    case 'enrolling':
      return row(LEAVING, 'wait', 'yes');
    case 'adopting':
      return row(['accept', ...LEAVING], 'full', 'yes');
    case 'adopted':
      return row(['readopt', ...LEAVING], 'full', 'cordoned');
    case 'rejected':
      return row(LEAVING, 'none', 'yes');
    case 'failed':
      return row(LEAVING, 'full', 'yes');
    case 'retired':
      return row(LEAVING, 'full', 'yes');
    case 'purging':
      // A purging node serves its purge; a decommission would race the wipe.
      return row(['purge'], 'full', 'yes');
    case 'decommissioning':
      return row(['finish-decommission', ...LEAVING], 'full', 'no');
    case 'decommissioned':
      return row([], 'none', 'no');
    default:
      return assertNever(state);
  }
}

/**
 * Every state's row, built once and frozen: rules are read on every control, placement and agent
 * call, and no caller may change them for another.
 */
const RULES: Readonly<Record<ProvisionState, ProvisionRules>> = Object.freeze(
  Object.fromEntries(PROVISION_STATES.map((state) => [state, rulesOf(state)])) as Record<
    ProvisionState,
    ProvisionRules
  >,
);

/** Where a move takes a node. */
export function moveTarget(move: ProvisionMove): ProvisionState {
  switch (move) {
    case 'approve':
    case 'readopt':
      return 'adopting';
    case 'reject':
      return 'rejected';
    case 'accept':
      return 'adopted';
    case 'purge':
      return 'purging';
    case 'decommission':
      return 'decommissioning';
    case 'finish-decommission':
      return 'decommissioned';
    default:
      return assertNever(move);
  }
}

export function canMove(state: ProvisionState, move: ProvisionMove): boolean {
  return provisionRules(state).moves.includes(move);
}

/** States from which no control moves a node any more. */
export function isTerminal(state: ProvisionState): boolean {
  return provisionRules(state).terminal;
}

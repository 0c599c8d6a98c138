import { parseDeadline } from './deadline';
import { SLUG_PATTERN } from './ids';
import type { MaintenancePhase } from './maintenance-progress';

/**
 * One step of a maintenance plan (docs/lifecycle/maintenance.md), applied to a node in order:
 * `drain` (with its deadline), `run` a configured action (it must exit 0), `reboot` (the `reboot`
 * action, then the node back on a new boot id), `verify` (every probe healthy for `healthyAfter`,
 * then an optional action that must exit 0), `uncordon`.
 */
export type MaintenanceStep =
  | { kind: 'drain'; deadline?: string }
  | { kind: 'run'; action: string; args?: Record<string, string> }
  | { kind: 'reboot' }
  | { kind: 'verify'; action?: string }
  | { kind: 'uncordon' };

export type StepKind = MaintenanceStep['kind'];

/** What a maintenance of one node carries out, and how long its waits may take. */
export interface MaintenancePlan {
  steps: MaintenanceStep[];
  /** How long a reboot may take to come back on a new boot id. */
  rebootTimeoutMs: number;
  /** How long every probe must hold healthy for `verify`. */
  healthyAfterMs: number;
  /** How long `verify` waits for the probes to hold before it fails. */
  verifyTimeoutMs: number;
}

export const DEFAULT_REBOOT_TIMEOUT_MS = 15 * 60_000;
export const DEFAULT_HEALTHY_AFTER_MS = 60_000;
export const DEFAULT_VERIFY_TIMEOUT_MS = 10 * 60_000;
export const MAX_STEPS = 16;

/** The action a `reboot` step runs on the node: it must be configured with `restarts: true`. */
export const REBOOT_ACTION = 'reboot';

/**
 * What is wrong with a plan, or null: at least one step, at most `MAX_STEPS`; a drain only first,
 * an uncordon only last, each at most once; a deadline one `parseDeadline` takes.
 */
export function planProblem(steps: readonly MaintenanceStep[]): string | null {
  if (steps.length === 0) return 'a plan needs at least one step';
  if (steps.length > MAX_STEPS) return `a plan has at most ${MAX_STEPS} steps`;
  for (const [index, step] of steps.entries()) {
    if (step.kind === 'drain' && index !== 0)
      return `step ${index + 1}: drain comes first, before anything runs`;
    if (step.kind === 'uncordon' && index !== steps.length - 1) {
      return `step ${index + 1}: uncordon comes last, once everything else is done`;
    }
    if (step.kind === 'drain' && step.deadline !== undefined) {
      const parsed = parseDeadline(step.deadline, Date.now());
      if ('problem' in parsed) return `step ${index + 1}: drain deadline ${parsed.problem}`;
    }
  }
  return null;
}

/** `K=V,K=V`: the arguments of a `run` step as `--step` writes them; null when malformed. */
function argsOf(text: string): Record<string, string> | null {
  const args: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    const name = pair.slice(0, at);
    if (at <= 0 || !SLUG_PATTERN.test(name) || Object.hasOwn(args, name) || at === pair.length - 1)
      return null;
    args[name] = pair.slice(at + 1);
  }
  return args;
}

/**
 * A step as `drydock pools maintain --step` writes it: `drain[:DEADLINE]`, `run:ACTION[:K=V,…]`,
 * `reboot`, `verify[:ACTION]`, `uncordon`. Null when it is none of those.
 */
export function parseStep(text: string): MaintenanceStep | null {
  const [kind, value, ...rest] = text.split(':');
  if (kind === 'run' && rest.length > 0) {
    const args = argsOf(rest.join(':'));
    return value !== undefined && SLUG_PATTERN.test(value) && args
      ? { kind: 'run', action: value, args }
      : null;
  }
  if (rest.length > 0 && kind !== 'drain') return null;
  const rejoined = [value, ...rest].join(':');
  switch (kind) {
    case 'drain':
      if (value === undefined) return { kind: 'drain' };
      return 'deadline' in parseDeadline(rejoined, Date.now()) ? { kind: 'drain', deadline: rejoined } : null;
    case 'run':
      return value !== undefined && SLUG_PATTERN.test(value) ? { kind: 'run', action: value } : null;
    case 'verify':
      if (value === undefined) return { kind: 'verify' };
      return SLUG_PATTERN.test(value) ? { kind: 'verify', action: value } : null;
    case 'reboot':
    case 'uncordon':
      return value === undefined ? { kind } : null;
    default:
      return null;
  }
}

/** A step in the words `parseStep` reads. */
export function stepText(step: MaintenanceStep): string {
  switch (step.kind) {
    case 'drain':
      return step.deadline ? `drain:${step.deadline}` : 'drain';
    case 'run': {
      const args = Object.entries(step.args ?? {}).map(([k, v]) => `${k}=${v}`);
      return args.length > 0 ? `run:${step.action}:${args.join(',')}` : `run:${step.action}`;
    }
    case 'verify':
      return step.action ? `verify:${step.action}` : 'verify';
    default:
      return step.kind;
  }
}

/** The phase of a maintenance at `step`. */
export function stepPhase(step: MaintenanceStep): MaintenancePhase {
  switch (step.kind) {
    case 'drain':
      return 'draining';
    case 'run':
      return 'running';
    case 'reboot':
      return 'rebooting';
    case 'verify':
      return 'verifying';
    case 'uncordon':
      return 'uncordoning';
  }
}

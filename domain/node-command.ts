import { DrydockError } from './errors';

/** An action a node's agent says it runs (its configuration file names its command line). */
export interface ActionOnNode {
  name: string;
  /** Its declared parameters: a value must match `pattern` (checked by the agent); `default` when none is given. */
  params: Record<string, { pattern: string; default?: string }>;
}

/** How long a command waits for its node when the request names no `expiresIn`. */
export const DEFAULT_COMMAND_EXPIRY_MS = 60 * 60_000;
/** The longest a command may wait for its node. */
export const MAX_COMMAND_EXPIRY_MS = 7 * 24 * 60 * 60_000;

/**
 * The arguments a `run` command carries: each declared parameter the caller gave, or its default.
 * Refused (INVALID_INPUT, nothing recorded) when the node's agent reported its actions and this one
 * is not among them, an argument names no declared parameter, or a parameter with no default has
 * no value. A node whose agent never reported its actions takes the request as asked: its agent
 * refuses what it does not run. Values are checked against their patterns by the agent, which
 * has the configuration (the API runs no pattern a node sent it).
 */
export function argsFor(
  actions: readonly ActionOnNode[] | null,
  action: string,
  args: Record<string, string>,
): Record<string, string> {
  if (actions === null) return args;
  const declared = actions.find((a) => a.name === action);
  if (!declared) {
    const configured = actions.map((a) => a.name).join(', ') || 'none';
    throw new DrydockError(
      'INVALID_INPUT',
      `the node's agent has no action ${action} (configured: ${configured}); actions are set in its --config file`,
      { action, configured: actions.map((a) => a.name) },
    );
  }
  const unknown = Object.keys(args).filter((name) => !Object.hasOwn(declared.params, name));
  if (unknown.length > 0) {
    throw new DrydockError(
      'INVALID_INPUT',
      `action ${action} has no parameter ${unknown.join(', ')} (declared: ${Object.keys(declared.params).join(', ') || 'none'})`,
      { action, unknown, declared: Object.keys(declared.params) },
    );
  }
  const resolved: Record<string, string> = {};
  const missing: string[] = [];
  for (const [name, param] of Object.entries(declared.params)) {
    const value = args[name] ?? param.default;
    if (value === undefined) missing.push(name);
    else resolved[name] = value;
  }
  if (missing.length > 0) {
    throw new DrydockError('INVALID_INPUT', `action ${action} needs a value for ${missing.join(', ')}`, {
      action,
      missing,
    });
  }
  return resolved;
}

/** The most output a `run` command keeps, stdout and stderr together (also an action's default limit). */
export const MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * A program's output as Drydock keeps and shows it: its bytes decoded as UTF-8, U+FFFD for what is
 * not UTF-8 (a character cut at the output limit, binary) and for NUL, which Postgres does not
 * store. Everything else is kept as written (escape sequences included): shown, it is escaped.
 */
export function outputText(base64: string): string {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return new TextDecoder('utf-8', { fatal: false }).decode(bytes).replaceAll('\u0000', '\ufffd');
}

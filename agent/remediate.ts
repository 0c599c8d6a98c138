import type { ActionConfig } from './config';
import type { AgentCommand, CommandContext, CommandHandler, RunOutcome } from './commands';
import { MAX_REASON } from './free-text';
import { spokenDuration } from '../domain/duration';
import { runArgv, scriptEnv } from './run-argv';

/** The actions this node can run, by name. */
export type ActionConfigs = Record<string, ActionConfig>;

/** How many of the last lines of an action's stderr a refusal quotes. */
const STDERR_LINES = 3;

/**
 * The agent's side of a remediation (docs/agent/gpu-machine.md): a `remediate` command names an
 * action; the configured command line for it runs, and exit 0 acks. An action this node has no
 * mapping for is refused, saying which it has. An action that restarts the machine is acked first
 * and run after the API has the ack (the agent would not live to report its exit).
 */
export function remediateHandler(actions: ActionConfigs): CommandHandler {
  return async (command, context) => {
    const name = command.action ?? '';
    const action = Object.hasOwn(actions, name) ? actions[name] : undefined;
    if (!action) {
      const configured = Object.keys(actions).join(', ') || 'none';
      return {
        outcome: 'refuse',
        reason: `no action ${name || '(none named)'} is configured on this node (configured: ${configured})`,
      };
    }
    const run = () => runAction(name, action, command, context);
    if (!action.restarts) return { outcome: 'run', action: name, run };
    return {
      outcome: 'ack',
      action: name,
      restarts: true,
      after: async () => {
        const ran = await run();
        if (ran.outcome === 'refuse') throw new Error(ran.reason);
      },
    };
  };
}

/** Runs the action's command line with the documented environment; its exit is the outcome. */
async function runAction(
  name: string,
  action: ActionConfig,
  command: AgentCommand,
  context: CommandContext,
): Promise<RunOutcome> {
  context.log('info', `command ${command.id}: running ${name}: ${action.command.join(' ')}`, {
    commandId: command.id,
    action: name,
  });
  const result = await runArgv(action.command, {
    env: scriptEnv({
      nodeId: context.nodeId,
      commandId: command.id,
      action: name,
      condition: command.condition ?? '',
    }),
    timeoutMs: action.timeoutMs,
    signal: context.signal,
    leaveOnStop: action.restarts,
  });
  switch (result.kind) {
    case 'exited':
      if (result.code === 0) return { outcome: 'ack' };
      return refusal(`${name} exited ${result.code ?? `on ${result.signal}`}`, result.stderr);
    case 'timed-out':
      return refusal(`${name} timed out after ${spokenDuration(action.timeoutMs)}`, result.stderr);
    case 'not-started':
      return { outcome: 'refuse', reason: `${name} could not start: ${result.message}` };
    case 'stopped':
      return { outcome: 'stopped' };
  }
}

/**
 * `what`, then the last lines of stderr (joined with ` | `), cut at their start rather than their
 * end when the whole is longer than the API takes: the last line is the one that says why.
 */
function refusal(what: string, stderr: string): RunOutcome {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .slice(-STDERR_LINES);
  if (lines.length === 0) return { outcome: 'refuse', reason: what };
  const head = `${what}: `;
  let tail = lines.join(' | ');
  const room = MAX_REASON - head.length;
  if (tail.length > room) {
    let start = tail.length - room + 1;
    // Not between the halves of a surrogate pair.
    if (/[\udc00-\udfff]/.test(tail[start]!)) start++;
    tail = `…${tail.slice(start)}`;
  }
  return { outcome: 'refuse', reason: `${head}${tail}` };
}

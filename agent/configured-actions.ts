import type { AgentFacts } from './client';
import type { AgentCommand } from './commands';
import { PLACEHOLDER, type ActionConfig } from './config';
import { spokenDuration } from '../domain/duration';
import { runArgv, scriptEnv } from './run-argv';
import type { ActionRunner, PreparedRun, RunResult } from './run-commands';

/**
 * The real agent's actions for `run` commands, from its `--config` file: an action it has and
 * arguments its parameters declare, each matching its pattern whole (a missing one takes its
 * default), or the command is refused saying what is wrong. The command line runs as configured,
 * `{name}` replaced by parameter `name`'s value as one argument (never a shell), with the action's
 * timeout, and keeps up to its `outputLimit` of output.
 */
export function configuredActions(actions: Record<string, ActionConfig>): ActionRunner {
  return {
    describe: () => describeActions(actions),
    prepare: (command) => prepare(actions, command),
  };
}

/** The actions as the agent reports them: names, parameters, timeouts, no command lines. */
export function describeActions(actions: Record<string, ActionConfig>): AgentFacts['actions'] {
  return Object.entries(actions).map(([name, action]) => ({
    name,
    params: Object.fromEntries(
      Object.entries(action.params).map(([param, p]) => [
        param,
        { pattern: p.pattern, ...(p.default === undefined ? {} : { default: p.default }) },
      ]),
    ),
    timeoutSeconds: Math.max(1, Math.ceil(action.timeoutMs / 1000)),
    restarts: action.restarts,
  }));
}

function prepare(actions: Record<string, ActionConfig>, command: AgentCommand): PreparedRun {
  const name = command.action ?? '';
  const action = Object.hasOwn(actions, name) ? actions[name] : undefined;
  if (!action) {
    const configured = Object.keys(actions).join(', ') || 'none';
    return {
      refuse: `no action ${name || '(none named)'} is configured on this node (configured: ${configured})`,
    };
  }
  const args = command.args ?? {};
  const values: Record<string, string> = {};
  for (const [param, value] of Object.entries(args)) {
    const declared = Object.hasOwn(action.params, param) ? action.params[param] : undefined;
    if (!declared) return { refuse: `action ${name} has no parameter ${param}` };
    if (!declared.matches.test(value)) {
      return {
        refuse: `${param}=${JSON.stringify(value)} does not match the pattern ${declared.pattern} of action ${name}`,
      };
    }
    values[param] = value;
  }
  for (const [param, declared] of Object.entries(action.params)) {
    if (values[param] !== undefined) continue;
    if (declared.default === undefined) return { refuse: `action ${name} needs a value for ${param}` };
    values[param] = declared.default;
  }
  const argv = action.command.map((word) => word.replace(PLACEHOLDER, (_, param: string) => values[param]!));
  return {
    restarts: action.restarts,
    run: async (context): Promise<RunResult> => {
      const result = await runArgv(argv, {
        env: scriptEnv({ nodeId: context.nodeId, commandId: command.id, action: name }),
        timeoutMs: action.timeoutMs,
        signal: context.signal,
        leaveOnStop: action.restarts,
        keepBytes: action.outputLimit,
      });
      switch (result.kind) {
        case 'exited':
          if (result.code === 0) {
            return action.restarts
              ? { status: 'restarting' }
              : { status: 'succeeded', exitCode: 0, output: result.output! };
          }
          return {
            status: 'failed',
            exitCode: result.code,
            reason: `${name} exited ${result.code ?? `on ${result.signal}`}`,
            output: result.output!,
          };
        case 'timed-out':
          return {
            status: 'failed',
            exitCode: null,
            reason: `${name} timed out after ${spokenDuration(action.timeoutMs)}`,
            output: result.output!,
          };
        case 'not-started':
          return {
            status: 'failed',
            exitCode: null,
            reason: `${name} could not start: ${result.message}`,
            output: { stdout: '', stderr: '', droppedBytes: 0 },
          };
        case 'stopped':
          return { status: 'stopped' };
      }
    },
  };
}

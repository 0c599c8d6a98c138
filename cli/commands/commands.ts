import type { Schemas } from '@drydock/client';
import { DURATION_PATTERN } from '../../domain/duration';
import { SLUG_PATTERN } from '../../domain/ids';
import type { ApiClient } from '../client';
import { defineCommand, type Command } from '../command';
import { CliError, UsageError } from '../errors';
import { dash, fields, table, type Output } from '../output';
import { formatElapsed } from '../wait';
import { idempotencyKeyFlag, reasonFlag } from './flags';

/**
 * Node commands (docs/lifecycle/commands.md): run an action configured on a node's agent, follow
 * it to its end, read its output; list a node's commands; show or withdraw one.
 */

type NodeCommand = Schemas['NodeCommand'];

const OPEN = ['pending', 'running'];

/** How long one read of a command waits for its end before the progress line is drawn again. */
const WAIT_SECONDS = 20;

/** `--arg K=V`, repeatable: a value of one of the action's declared parameters. */
const argFlag = {
  type: 'list',
  value: 'K=V',
  maxItems: 32,
  repeatable: true,
  whole: true,
  help: "a value for one of the action's declared parameters (repeat for more); the agent checks it against the parameter's pattern",
  checkItem: (item: string) => {
    const at = item.indexOf('=');
    if (at <= 0) return 'must be NAME=VALUE';
    if (!SLUG_PATTERN.test(item.slice(0, at)))
      return `${item.slice(0, at)} is not a parameter name (a-z 0-9 -)`;
    return undefined;
  },
} as const;

const expiresFlag = {
  type: 'string',
  value: 'DURATION',
  pattern: DURATION_PATTERN,
  patternHint: 'a duration such as 30m, 2h or 1d (at most 7d)',
  help: 'how long the command waits for an offline node before it expires unrun',
  default: '1h',
} as const;

/** A command to the terminal: `diagnostics on node_…: succeeded (exit 0) in 2s`. */
function summary(command: NodeCommand): string {
  const ran =
    command.startedAt && command.finishedAt
      ? ` in ${formatElapsed(Date.parse(command.finishedAt) - Date.parse(command.startedAt))}`
      : '';
  const exit = command.exitCode === null ? '' : ` (exit ${command.exitCode})`;
  const why = command.statusReason ? `: ${command.statusReason}` : '';
  return `${command.action} on ${command.nodeId}: ${command.status}${exit}${ran}${why}`;
}

/** What the command waits for, as the progress line says it. */
function waiting(command: NodeCommand): string {
  if (command.status === 'running') {
    return `running since ${formatElapsed(Date.now() - Date.parse(command.startedAt!))} ago`;
  }
  return `waiting for the node's agent to take it (expires ${command.expiresAt})`;
}

/** Reads the command until it has ended, holding each read open on the server; progress on a terminal. */
async function followCommand(
  api: ApiClient,
  out: Output,
  first: NodeCommand,
  timeoutMs?: number,
): Promise<NodeCommand> {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
  let command = first;
  const onInterrupt = () => {
    out.note(`stopped waiting; command ${command.id} goes on: drydock commands show ${command.id} --wait`);
    process.exit(130);
  };
  process.once('SIGINT', onInterrupt);
  try {
    while (OPEN.includes(command.status)) {
      out.progress(`${command.action} ${command.id}: ${waiting(command)}`);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new CliError(
          'TIMEOUT',
          `command ${command.id} still ${command.status}; it goes on — follow it with: drydock commands show ${command.id} --wait`,
        );
      }
      const wait = Math.max(1, Math.min(WAIT_SECONDS, Math.floor(left / 1000)));
      command = await api.GET('/v1/commands/{id}', {
        params: { path: { id: command.id }, query: { wait } },
        timeoutMs: (wait + 15) * 1000,
      });
    }
    return command;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    out.clearProgress();
  }
}

/**
 * An ended command's result: with --json the command; else its stdout on stdout and its stderr on
 * stderr as the action wrote them, then one line saying how it ended. Exit 1 unless it succeeded.
 */
function reportEnded(out: Output, command: NodeCommand): number {
  if (out.json) out.result(command, () => '');
  else {
    if (command.output?.stdout) out.io.stdout(command.output.stdout);
    if (command.output?.stderr) out.io.stderr(command.output.stderr);
    if (command.output && command.output.droppedBytes > 0) {
      out.note(`… ${command.output.droppedBytes} bytes more not kept (the action's output limit)`);
    }
    out.note(summary(command));
  }
  if (command.status === 'succeeded') return 0;
  throw new CliError('COMMAND_FAILED', `command ${command.id} ${command.status}`, 1);
}

const runFlags = {
  arg: argFlag,
  reason: { ...reasonFlag, required: true },
  'expires-in': expiresFlag,
  'idempotency-key': idempotencyKeyFlag,
  wait: { type: 'boolean', help: 'block until it has ended, print its output; exit 1 unless it succeeded' },
  timeout: {
    type: 'duration',
    value: 'DURATION',
    requires: 'wait',
    help: 'with --wait: give up waiting after DURATION; the command goes on',
  },
} as const;

/** Queues `action` on the node, then, with `wait`, follows it and prints its output. */
async function runAction(
  api: ApiClient,
  out: Output,
  nodeId: string,
  request: { action: string; args: Record<string, string>; reason: string; expiresIn?: string; key?: string },
  follow: { wait: boolean; timeoutMs?: number },
): Promise<number> {
  const command = await api.POST('/v1/nodes/{id}/commands', {
    params: { path: { id: nodeId }, header: { 'idempotency-key': request.key } },
    body: {
      action: request.action,
      ...(Object.keys(request.args).length > 0 ? { args: request.args } : {}),
      reason: request.reason,
      expiresIn: request.expiresIn,
    },
  });
  if (!follow.wait) {
    out.result(command, () => `${command.action} on ${nodeId}: command ${command.id} ${command.status}`);
    return 0;
  }
  if (!out.json) out.note(`${command.action} on ${nodeId}: command ${command.id} ${command.status}; waiting`);
  return reportEnded(out, await followCommand(api, out, command, follow.timeoutMs));
}

const run = defineCommand({
  words: ['nodes', 'run'],
  summary:
    "Run an action configured on the node's agent (diagnostics, a driver upgrade, …) and read its output",
  operands: [
    { name: 'NODE', type: 'node' },
    { name: 'ACTION', type: 'action' },
  ],
  flags: runFlags,
  check({ flags }) {
    const names = (flags.arg ?? []).map((item) => item.slice(0, item.indexOf('=')));
    const twice = names.find((name, i) => names.indexOf(name) !== i);
    if (twice) throw new UsageError(`--arg ${twice} is given twice`);
  },
  async run({ api, out, args, flags }) {
    const pairs = (flags.arg ?? []).map((item) => [
      item.slice(0, item.indexOf('=')),
      item.slice(item.indexOf('=') + 1),
    ]);
    return runAction(
      api,
      out,
      args.NODE,
      {
        action: args.ACTION,
        args: Object.fromEntries(pairs),
        reason: flags.reason,
        expiresIn: flags['expires-in'],
        key: flags['idempotency-key'],
      },
      { wait: flags.wait, timeoutMs: flags.timeout },
    );
  },
});

const logs = defineCommand({
  words: ['nodes', 'logs'],
  summary: "Read the node's logs: runs its `logs` action (its parameter `since`) and prints what it wrote",
  operands: [{ name: 'NODE', type: 'node' }],
  flags: {
    since: {
      type: 'string',
      value: 'DURATION',
      pattern: /^[0-9]+[smhd]$/,
      patternHint: 'a duration such as 30m, 1h or 2d',
      help: 'how far back',
      default: "the action's default",
    },
    reason: { ...reasonFlag, default: 'drydock nodes logs' },
    timeout: {
      type: 'duration',
      value: 'DURATION',
      help: 'give up waiting after DURATION; the command goes on',
    },
  },
  async run({ api, out, args, flags }) {
    return runAction(
      api,
      out,
      args.NODE,
      {
        action: 'logs',
        args: flags.since ? { since: flags.since } : {},
        reason: flags.reason ?? 'drydock nodes logs',
      },
      { wait: true, timeoutMs: flags.timeout },
    );
  },
});

const list = defineCommand({
  words: ['nodes', 'commands'],
  summary: "List a node's commands, newest first",
  operands: [{ name: 'NODE', type: 'node' }],
  flags: {
    status: {
      type: 'string',
      value: 'STATUS',
      choices: [
        'pending',
        'running',
        'succeeded',
        'failed',
        'refused',
        'returned',
        'expired',
        'cancelled',
        'acked',
      ],
      help: 'only commands in STATUS',
    },
    limit: { type: 'integer', value: 'N', min: 1, max: 100, help: 'at most N', default: '20' },
  },
  async run({ api, out, args, flags }) {
    const page = await api.GET('/v1/nodes/{id}/commands', {
      params: {
        path: { id: args.NODE },
        query: { status: flags.status as never, limit: flags.limit ?? 20 },
      },
    });
    out.result(page, () =>
      page.items.length === 0
        ? `no commands on ${args.NODE}; run one with: drydock nodes run ${args.NODE} ACTION --reason R --wait`
        : table(
            ['ID', 'KIND', 'ACTION', 'STATUS', 'EXIT', 'CREATED', 'BY'],
            page.items.map((c) => [
              c.id,
              c.kind,
              dash(c.action),
              c.status,
              c.exitCode === null ? '-' : String(c.exitCode),
              c.createdAt,
              dash(c.requestedBy),
            ]),
          ),
    );
  },
});

const show = defineCommand({
  words: ['commands', 'show'],
  summary: 'Show a command and its output; --wait follows it to its end',
  operands: [{ name: 'COMMAND', type: 'command' }],
  flags: {
    wait: { type: 'boolean', help: 'block until it has ended; exit 1 unless it succeeded' },
    timeout: runFlags.timeout,
  },
  async run({ api, out, args, flags }) {
    const command = await api.GET('/v1/commands/{id}', { params: { path: { id: args.COMMAND } } });
    if (flags.wait) return reportEnded(out, await followCommand(api, out, command, flags.timeout));
    out.result(command, () =>
      [
        fields([
          ['command', command.id],
          ['node', command.nodeId],
          [
            'action',
            `${dash(command.action)} ${Object.entries(command.args)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`.trim(),
          ],
          ['status', `${command.status}${command.statusReason ? ` (${command.statusReason})` : ''}`],
          ['exit', command.exitCode === null ? '-' : String(command.exitCode)],
          ['asked by', `${dash(command.requestedBy)}: ${dash(command.reason)}`],
          ['created', command.createdAt],
          ['expires', dash(command.expiresAt)],
          ['started', dash(command.startedAt)],
          ['finished', dash(command.finishedAt)],
        ]),
        command.output?.stdout ? `\n--- stdout ---\n${command.output.stdout}` : '',
        command.output?.stderr ? `\n--- stderr ---\n${command.output.stderr}` : '',
        command.output && command.output.droppedBytes > 0
          ? `\n… ${command.output.droppedBytes} bytes more not kept (the action's output limit)`
          : '',
      ].join(''),
    );
    return 0;
  },
});

const cancel = defineCommand({
  words: ['commands', 'cancel'],
  summary: 'Withdraw a command the node has not started',
  operands: [{ name: 'COMMAND', type: 'command' }],
  flags: {},
  async run({ api, out, args }) {
    const command = await api.DELETE('/v1/commands/{id}', { params: { path: { id: args.COMMAND } } });
    out.result(command, () => summary(command));
  },
});

export const commandCommands: Command[] = [run, logs, list, show, cancel];

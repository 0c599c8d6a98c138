import { lstatSync } from 'node:fs';
import { hostname as machineHostname } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDuration } from '../domain/duration';
import { SLUG_PATTERN } from '../domain/ids';
import { HEARTBEAT_EVERY_MS } from '../domain/liveness';
import { flagHelp, GLOBAL_FLAGS, parseArgs, type FlagSpecs } from './args';
import { ApiError, Unreachable } from '../client';
import { AgentClient } from './client';
import { defaultHandlers } from './commands';
import { Connections } from './connections';
import { AgentError, IdentityInvalid, UsageError } from './errors';
import {
  dataFiles,
  moveAside,
  prepareDataDir,
  readIdentity,
  requireIdentity,
  updateCaPublicKey,
} from './identity';
import { EMPTY_INVENTORY, readInventoryFile } from './inventory';
import { joinCluster } from './join';
import { FileJournal } from './journal';
import { stderrLog, type Log } from './log';
import { AGENT_COMMAND, claimPidFile, releasePidFile, runningAgent, waitForExit } from './pid-file';
import { removeNode } from './purge';
import { AgentSession } from './session';

/** Where the command line writes (tests pass their own). */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIo: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

const TOKEN_ENV = 'DRYDOCK_JOIN_TOKEN';

const DATA_DIR = {
  type: 'string',
  value: 'DIR',
  help: 'the data directory (identity.json, node.key, journal.jsonl)',
  required: true,
} as const;

const COMMANDS = {
  join: {
    summary: 'join the cluster as a new node (with a token: adopted; without: waits for approval)',
    flags: {
      api: { type: 'string', value: 'URL', help: 'the Drydock API', required: true },
      token: { type: 'string', value: 'SECRET', help: `a join token (or env ${TOKEN_ENV})` },
      'data-dir': DATA_DIR,
      hostname: { type: 'string', value: 'H', help: "the node's hostname (default: this machine's)" },
      'display-name': { type: 'string', value: 'D', help: 'a name for people' },
      pool: { type: 'string', value: 'P', help: 'the pool to ask for when joining without a token' },
      inventory: { type: 'string', value: 'FILE', help: 'JSON { accelerators: [...], storageRoots: [...] }' },
      reset: { type: 'boolean', help: 'move the old identity and journal aside and join as a new node' },
      yes: { type: 'boolean', help: 'confirm --reset' },
    },
  },
  run: {
    summary: 'heartbeat and carry out commands until stopped',
    flags: {
      'data-dir': DATA_DIR,
      api: { type: 'string', value: 'URL', help: 'the Drydock API (default: the one joined)' },
      'heartbeat-every': {
        type: 'string',
        value: 'DURATION',
        help: `how often to heartbeat (default ${HEARTBEAT_EVERY_MS / 1000}s)`,
      },
      binary: {
        type: 'string',
        value: 'PATH',
        help: "the agent's binary, which a purge deletes last (default: the launcher this runs from)",
      },
    },
  },
  stop: {
    summary: 'stop the running agent and say goodbye (the node goes offline)',
    flags: {
      'data-dir': DATA_DIR,
      api: { type: 'string', value: 'URL', help: 'the Drydock API (default: the one joined)' },
    },
  },
} satisfies Record<string, { summary: string; flags: FlagSpecs }>;

type CommandName = keyof typeof COMMANDS;

function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

/** Runs one command line; resolves to the exit code: 0 ok, 1 failed, 2 usage, 3 identity invalid. */
export async function main(
  argv: readonly string[],
  io: Io = processIo,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  try {
    const { command, flags } = parseArgs(argv, (name) =>
      isCommand(name) ? COMMANDS[name].flags : undefined,
    );
    if (command === undefined || !isCommand(command)) {
      if (flags.has('help')) return (io.stdout(helpText()), 0);
      throw new UsageError('name a command: join, run or stop');
    }
    if (flags.has('help')) return (io.stdout(helpText(command)), 0);
    const text = (name: string) => {
      const value = flags.get(name);
      return typeof value === 'string' ? value : undefined;
    };
    const json = flags.has('json');
    const dataDir = resolve(text('data-dir')!);
    switch (command) {
      case 'join':
        return await join(io, json, {
          api: checkApi(text('api')!),
          token: text('token') ?? (env[TOKEN_ENV] || undefined),
          dataDir,
          hostname: text('hostname') ?? machineHostname(),
          displayName: text('display-name'),
          poolId: checkPool(text('pool')),
          inventory: text('inventory'),
          reset: flags.has('reset'),
          yes: flags.has('yes'),
        });
      case 'run':
        return await run(json, {
          dataDir,
          api: text('api') === undefined ? undefined : checkApi(text('api')!),
          heartbeatEveryMs: checkInterval(text('heartbeat-every')),
          binary: checkBinary(text('binary') ?? ownLauncher()),
        });
      case 'stop':
        return await stop(io, json, {
          dataDir,
          api: text('api') === undefined ? undefined : checkApi(text('api')!),
        });
    }
  } catch (error) {
    const failure = asAgentError(error);
    io.stderr(
      `error: ${failure.message}${failure instanceof UsageError ? "\nrun 'drydock-agent --help' for usage" : ''}\n`,
    );
    return failure.exitCode;
  }
}

async function join(
  io: Io,
  json: boolean,
  options: {
    api: string;
    token?: string;
    dataDir: string;
    hostname: string;
    displayName?: string;
    poolId?: string;
    inventory?: string;
    reset: boolean;
    yes: boolean;
  },
): Promise<number> {
  if (options.reset && !options.yes) {
    throw new UsageError(
      '--reset makes this machine a new node and orphans the old one; add --yes to confirm',
    );
  }
  const inventory = options.inventory ? readInventoryFile(options.inventory) : EMPTY_INVENTORY;
  prepareDataDir(options.dataDir);
  if (options.reset) {
    const pid = runningAgent(dataFiles(options.dataDir).pid);
    if (pid !== null)
      throw new AgentError(`an agent runs for this data directory (pid ${pid}); stop it first`);
    for (const moved of moveAside(options.dataDir)) io.stderr(`moved aside: ${moved}\n`);
  } else {
    const existing = readIdentity(options.dataDir);
    if (existing) {
      io.stdout(
        json
          ? `${JSON.stringify({ nodeId: existing.nodeId, alreadyJoined: true })}\n`
          : `already joined as ${existing.nodeId}\n`,
      );
      return 0;
    }
  }
  const connections = new Connections();
  try {
    const { identity, provisionState } = await joinCluster(
      new AgentClient(options.api, undefined, connections),
      {
        token: options.token,
        hostname: options.hostname,
        displayName: options.displayName,
        poolId: options.poolId,
        inventory,
      },
      options.dataDir,
    );
    if (json) {
      const { nodeId, clusterId } = identity;
      io.stdout(`${JSON.stringify({ nodeId, provisionState, clusterId, dataDir: options.dataDir })}\n`);
    } else {
      io.stdout(`joined as ${identity.nodeId} (${provisionState})\n`);
      if (provisionState === 'pending') {
        io.stdout(`waiting for an operator's approval: drydock nodes approve ${identity.nodeId}\n`);
      }
    }
    return 0;
  } finally {
    connections.close();
  }
}

async function run(
  json: boolean,
  options: { dataDir: string; api?: string; heartbeatEveryMs: number; binary?: string },
) {
  const identity = requireIdentity(options.dataDir);
  const files = dataFiles(options.dataDir);
  const log = stderrLog(json);
  claimPidFile(files.pid);
  const connections = new Connections({ maxSockets: 4 });
  const client = new AgentClient(options.api ?? identity.api, identity.credential, connections);
  const journal = new FileJournal(files.journal);
  const session = new AgentSession({
    client,
    identity,
    persistCaKey: (caPublicKey) => updateCaPublicKey(options.dataDir, caPublicKey),
    dataDir: options.dataDir,
    heartbeatEveryMs: options.heartbeatEveryMs,
    handlers: defaultHandlers({ binary: options.binary }),
    journal,
    log,
  });
  const onSignal = () => void session.stop();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  try {
    const purge = journal.entries.find((e) => e.kind === 'purge' && e.outcome === 'acked');
    if (purge) {
      await finishPurge(client, log, purge.id, { nodeId: identity.nodeId, ...options });
      return 0;
    }
    log('info', `running as ${identity.nodeId}; heartbeat every ${options.heartbeatEveryMs} ms`, {
      nodeId: identity.nodeId,
    });
    session.start();
    const end = await session.ended;
    if (end.reason === 'revoked') throw new IdentityInvalid(end.message);
    if (end.reason === 'final') {
      if (end.error) throw new AgentError(`${end.kind} ${end.commandId} acknowledged, but: ${end.error}`);
      return 0;
    }
    log('info', 'stopped');
    return 0;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    releasePidFile(files.pid);
    connections.close();
  }
}

/**
 * Finishes a purge this node acknowledged before the agent stopped (killed between the ack and
 * the end of the deletion): the ack is sent again, in case it never reached the API (it answers
 * the same ack again as accepted, or 401 once it forgot the node), then the node is deleted.
 */
async function finishPurge(
  client: AgentClient,
  log: Log,
  commandId: string,
  target: { nodeId: string; dataDir: string; binary?: string },
): Promise<void> {
  log('info', `finishing purge ${commandId}, acknowledged before the agent stopped`, { commandId });
  try {
    await client.ack(commandId);
  } catch (error) {
    if (!(error instanceof ApiError || error instanceof Unreachable)) throw error;
    log('warn', `purge ${commandId}: the ack was not taken again (${error.message}); deleting all the same`);
  }
  try {
    removeNode(target, log);
  } catch (error) {
    throw new AgentError(`purge ${commandId} acknowledged, but: ${(error as Error).message}`);
  }
}

/** How long `stop` waits for a running agent to finish its last call and exit. */
const STOP_WAIT_MS = 15_000;

async function stop(io: Io, json: boolean, options: { dataDir: string; api?: string }): Promise<number> {
  const identity = requireIdentity(options.dataDir);
  // The running agent goes first: a heartbeat of its landing after the goodbye would connect the
  // node again.
  const pid = runningAgent(dataFiles(options.dataDir).pid);
  if (pid !== null) {
    process.kill(pid, 'SIGTERM');
    if (!(await waitForExit(pid, STOP_WAIT_MS))) {
      process.kill(pid, 'SIGKILL');
      await waitForExit(pid, 2_000);
    }
  }
  const connections = new Connections();
  try {
    await new AgentClient(options.api ?? identity.api, identity.credential, connections).heartbeat('offline');
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) throw new IdentityInvalid(error.message);
    if (error instanceof ApiError && error.status === 403) {
      throw new AgentError(`the control plane refuses this node's goodbye: ${error.message}`);
    }
    throw error;
  } finally {
    connections.close();
  }
  io.stdout(
    json
      ? `${JSON.stringify({ nodeId: identity.nodeId, state: 'offline', stoppedPid: pid })}\n`
      : 'offline\n',
  );
  return 0;
}

function checkApi(api: string): string {
  let url: URL;
  try {
    url = new URL(api);
  } catch {
    throw new UsageError(`--api must be an http(s) URL, got '${api}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--api must be an http(s) URL, got '${api}'`);
  }
  return api.replace(/\/+$/, '');
}

function checkPool(pool: string | undefined): string | undefined {
  if (pool !== undefined && !SLUG_PATTERN.test(pool)) {
    throw new UsageError(`--pool must be 1–63 of a-z 0-9 -, starting with a letter; got '${pool}'`);
  }
  return pool;
}

/**
 * The launcher this agent runs from (`process.argv[1]`), which a purge deletes unless `--binary`
 * names another; none when the process is not an agent's (main called in-process, as by a test).
 */
function ownLauncher(): string | undefined {
  const entry = process.argv[1];
  return entry && AGENT_COMMAND.test(entry) ? entry : undefined;
}

/** The binary a purge deletes: an existing file (or link), never a directory; none when unknown. */
function checkBinary(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const binary = resolve(path);
  let stat;
  try {
    stat = lstatSync(binary);
  } catch {
    throw new UsageError(`--binary must name the agent's binary; ${binary} does not exist`);
  }
  if (stat.isDirectory()) {
    throw new UsageError(`--binary must name the agent's binary; ${binary} is a directory`);
  }
  return binary;
}

function checkInterval(text: string | undefined): number {
  if (text === undefined) return HEARTBEAT_EVERY_MS;
  const ms = parseDuration(text);
  if (ms === null || ms < 100) {
    throw new UsageError(
      `--heartbeat-every must be a duration of at least 100ms, such as 500ms or 10s; got '${text}'`,
    );
  }
  return ms;
}

function asAgentError(error: unknown): AgentError {
  if (error instanceof AgentError) return error;
  if (error instanceof ApiError || error instanceof Unreachable) return new AgentError(error.message);
  // A bug in the agent itself: the stack is what a bug report needs.
  return new AgentError((error as Error | undefined)?.stack ?? String(error));
}

function helpText(command?: CommandName): string {
  if (command) {
    const { summary, flags } = COMMANDS[command];
    return `drydock-agent ${command}: ${summary}\n\n${flagHelp({ ...flags, ...GLOBAL_FLAGS })}\n`;
  }
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'drydock-agent: the Drydock node agent',
    '',
    'usage: drydock-agent [--json] COMMAND [flags]',
    '',
    ...lines,
    '',
    "'drydock-agent COMMAND --help' lists a command's flags.",
    'exit codes: 0 ok, 1 failed, 2 usage, 3 the node identity is no longer valid',
    '',
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}

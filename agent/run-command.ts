import { lstatSync } from 'node:fs';
import { resolve } from 'node:path';
import { baseUrl } from '../cli-kit/flags';
import { HEARTBEAT_EVERY_MS } from '../domain/liveness';
import { ApiError, Unreachable } from '@drydock/client';
import { AgentClient } from './client';
import { Connections } from './connections';
import { defineWordCommand } from '../cli-kit/word-command';
import { dataDirFlag, joinedApiFlag } from './command';
import { EMPTY_CONFIG, loadAgentConfig } from './config';
import { configFlags, withConfigFlags } from './config-flags';
import { defaultHandlers } from './commands';
import { AgentError, IdentityInvalid, UsageError } from './errors';
import { dataFiles, readPrivateKey, requireIdentity, updateCaPublicKey, updateCredential } from './identity';
import { renewalWith } from './renewal';
import { FileJournal } from './journal';
import { stderrLog } from '../cli-kit/log';
import type { Log } from './log';
import { claimPidFile, releasePidFile } from './pid-file';
import { removeNode } from './purge';
import { AgentSession } from './session';
import { KERNEL_BOOT_ID, readBoot } from './boot';
import { configuredActions } from './configured-actions';
import { FileOutputStore } from './run-commands';
import { DEFAULT_SSH_REFRESH_MS, SshFiles } from './ssh-files';

/** `drydock-agent run`: the node's session with the control plane, until stopped. */
export const runCommand = defineWordCommand({
  words: ['run'],
  summary: 'heartbeat and carry out commands until stopped',
  operands: [],
  flags: {
    'data-dir': dataDirFlag,
    api: joinedApiFlag,
    'heartbeat-every': {
      type: 'duration',
      value: 'DURATION',
      min: 100,
      help: 'how often to heartbeat',
      default: `${HEARTBEAT_EVERY_MS / 1000}s`,
    },
    config: {
      type: 'string',
      value: 'FILE',
      help: 'the actions, health probes and inventory discovery of this machine (YAML; docs/agent/gpu-machine.md)',
      default: 'none: the actions and probes of --action, --restarting-action and --probe only',
    },
    ...configFlags,
    'boot-id-file': {
      type: 'string',
      value: 'FILE',
      help: 'where to read the boot id said at each session start (a reboot is seen as a new one)',
      default: KERNEL_BOOT_ID,
    },
    binary: {
      type: 'string',
      value: 'PATH',
      help: "the agent's binary, which a purge deletes last",
      default: 'none: a purge deletes the data directory only',
    },
    'ssh-dir': {
      type: 'string',
      value: 'DIR',
      help: "where to write sshd's files for break-glass SSH: ca.pub, principals/root, revoked.krl (docs/security.md#break-glass-ssh)",
      default: 'none: no break-glass SSH',
    },
    'ssh-refresh': {
      type: 'duration',
      value: 'DURATION',
      min: 100,
      requires: 'ssh-dir',
      help: 'how often to ask for the SSH CA key and the revoked certificates',
      default: `${DEFAULT_SSH_REFRESH_MS / 1000}s`,
    },
  },
  async run({ flags, json }) {
    const dataDir = resolve(flags['data-dir']);
    const binary = checkBinary(flags.binary);
    const config = withConfigFlags(
      flags.config === undefined ? EMPTY_CONFIG : loadAgentConfig(flags.config),
      flags,
    );
    const heartbeatEveryMs = flags['heartbeat-every'] ?? HEARTBEAT_EVERY_MS;
    const bootIdFile = flags['boot-id-file'] ?? KERNEL_BOOT_ID;
    readBoot(bootIdFile); // a file it cannot read is a usage error now, not a session that never starts
    const identity = requireIdentity(dataDir);
    const files = dataFiles(dataDir);
    const log = stderrLog('drydock-agent', json);
    claimPidFile(files.pid);
    const connections = new Connections({ maxSockets: 4 });
    const api = flags.api === undefined ? identity.api : baseUrl(flags.api);
    const client = new AgentClient(api, identity.credential, connections);
    const journal = new FileJournal(files.journal);
    const session = new AgentSession({
      client,
      identity,
      persistCaKey: (caPublicKey) => updateCaPublicKey(dataDir, caPublicKey),
      dataDir,
      heartbeatEveryMs,
      handlers: defaultHandlers({ binary, actions: config.actions }),
      runner: configuredActions(config.actions),
      outputs: new FileOutputStore(files.outputs),
      boot: () => readBoot(bootIdFile),
      renewal: renewalWith(readPrivateKey(dataDir), (credential) => updateCredential(dataDir, credential)),
      probes: config.probes,
      ...(config.inventory ? { discovery: config.inventory } : {}),
      journal,
      log,
    });
    const sshFiles =
      flags['ssh-dir'] === undefined
        ? null
        : new SshFiles({
            client,
            dir: resolve(flags['ssh-dir']),
            everyMs: flags['ssh-refresh'] ?? DEFAULT_SSH_REFRESH_MS,
            log,
          });
    const onSignal = () => void session.stop();
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      const purge = journal.entries.find((e) => e.kind === 'purge' && e.outcome === 'acked');
      if (purge) {
        await finishPurge(client, log, purge.id, { nodeId: identity.nodeId, dataDir, binary });
        return 0;
      }
      log('info', `running as ${identity.nodeId}; heartbeat every ${heartbeatEveryMs} ms`, {
        nodeId: identity.nodeId,
      });
      session.start();
      sshFiles?.start();
      const end = await session.ended;
      if (end.reason === 'revoked') throw new IdentityInvalid(end.message);
      if (end.reason === 'final') {
        if (end.error) throw new AgentError(`${end.kind} ${end.commandId} acknowledged, but: ${end.error}`);
        return 0;
      }
      log('info', 'stopped');
      return 0;
    } finally {
      await sshFiles?.stop();
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      releasePidFile(files.pid);
      connections.close();
    }
  },
});

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

/** The binary a purge deletes: an existing file (or link), never a directory; none unless named. */
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

import { lstatSync, readdirSync, readFileSync, rmdirSync, unlinkSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { verifyPurgeCommand } from '../domain/signing';
import type { AgentCommand, CommandContext, CommandHandler } from './commands';
import { dataFiles, IdentitySchema } from './identity';
import type { Log } from './log';

/**
 * The agent's side of a purge (docs/lifecycle/purge.md). Everything that can refuse is checked before the
 * ack: a command that is not this node's, signed by its cluster CA, is refused with the verifier's
 * reason; a data directory that is a symbolic link, or holds no identity of this node, is refused
 * too — the operator sees `node.purge.refused` with why, and nothing is deleted. Only once the API
 * has the ack does the agent stop and delete its data directory and its binary.
 */

/** What the API records when a purge is not for this node, or null for a command it must obey. */
export function purgeCommandRefusal(
  command: AgentCommand,
  context: Pick<CommandContext, 'caPublicKey' | 'clusterId' | 'nodeId'>,
): string | null {
  const verdict = verifyPurgeCommand(command, {
    caPublicKeyPem: context.caPublicKey,
    clusterId: context.clusterId,
    nodeId: context.nodeId,
  });
  return verdict.ok ? null : verdict.reason;
}

/**
 * Why `dir` must not be deleted as node `nodeId`'s data directory, or null. Only a real directory
 * (not a symbolic link to one) that holds this node's identity — `identity.json`, a regular file
 * that loads, naming `nodeId` — is ever deleted: a mistyped `--data-dir` or a directory swapped for
 * a link is left alone.
 */
export function dataDirRefusal(dir: string, nodeId: string): string | null {
  const stat = lstatOrNull(dir);
  if (!stat) return `the data directory ${dir} does not exist; nothing deleted`;
  if (stat.isSymbolicLink()) return `the data directory ${dir} is a symbolic link; nothing deleted`;
  if (!stat.isDirectory()) return `the data directory ${dir} is not a directory; nothing deleted`;
  const file = dataFiles(dir).identity;
  const identityStat = lstatOrNull(file);
  if (!identityStat) return `no node identity in ${dir}; nothing deleted`;
  if (!identityStat.isFile()) return `${file} is not a regular file; nothing deleted`;
  let identity: unknown;
  try {
    identity = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    identity = undefined;
  }
  const parsed = IdentitySchema.safeParse(identity);
  if (!parsed.success) return `${file} is not a node identity; nothing deleted`;
  if (parsed.data.nodeId !== nodeId) {
    return `${dir} holds the identity of ${parsed.data.nodeId}, not ${nodeId}; nothing deleted`;
  }
  return null;
}

/** Where a purge deletes: the data directory, and the agent's own binary (absent: none to delete). */
export interface PurgeTarget {
  nodeId: string;
  dataDir: string;
  binary?: string;
}

/**
 * The purge handler of `drydock-agent run`: refuses what it must not obey (see above), and acks a
 * purge of its own; the ack is final, so the session has stopped — no heartbeat goes out again —
 * before `after` deletes the data directory, then the binary.
 */
export function purgeHandler(options: { binary?: string }): CommandHandler {
  return async (command, context) => {
    const { dataDir, nodeId } = context;
    const refusal = purgeCommandRefusal(command, context);
    if (refusal !== null) return { outcome: 'refuse', reason: refusal };
    if (dataDir === undefined) return { outcome: 'refuse', reason: 'this agent has no data directory' };
    const dirRefusal = dataDirRefusal(dataDir, nodeId);
    if (dirRefusal !== null) return { outcome: 'refuse', reason: dirRefusal };
    const target = { nodeId, dataDir, binary: options.binary };
    return { outcome: 'ack', final: true, after: async () => removeNode(target, context.log) };
  };
}

/** A simulated agent's purge: checked like the real agent's, acknowledged, and nothing deleted. */
export const simulatedPurgeHandler: CommandHandler = async (command, context) => {
  const refusal = purgeCommandRefusal(command, context);
  return refusal ? { outcome: 'refuse', reason: refusal } : { outcome: 'ack', final: true };
};

/**
 * Deletes the data directory (checked again first: it may have changed since the ack), then the
 * binary. Throws when something could not be deleted, saying what is left.
 */
export function removeNode(target: PurgeTarget, log: Log): void {
  removeDataDir(target.dataDir, target.nodeId);
  if (target.binary === undefined) {
    log('info', 'purged: data directory removed (no binary to remove)', { nodeId: target.nodeId });
    return;
  }
  if (!removeBinary(target.binary)) {
    log('info', `purged: data directory removed; the binary ${target.binary} was already gone`, {
      nodeId: target.nodeId,
    });
    return;
  }
  log('info', 'purged: data directory and binary removed', { nodeId: target.nodeId });
}

/**
 * Deletes node `nodeId`'s data directory without following any symbolic link out of it: entries
 * are examined with lstat, so a link is unlinked as a link and its target is never touched, and a
 * directory on another file system (something mounted inside) is not entered. The identity and
 * the journal go last, so that an agent killed halfway still knows who it was and what it acked.
 */
export function removeDataDir(dir: string, nodeId: string): void {
  const refusal = dataDirRefusal(dir, nodeId);
  if (refusal) throw new Error(refusal);
  const device = lstatSync(dir).dev;
  const files = dataFiles(dir);
  const last = [files.journal, files.identity];
  const left: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (!last.includes(path)) removeEntry(path, device, left);
  }
  for (const path of last) removeEntry(path, device, left);
  if (left.length > 0) throw new Error(`could not remove all of ${dir}; left: ${left.join(', ')}`);
  rmdirSync(dir);
}

/** Removes `path` (a directory with what it holds); what must stay is added to `left`. */
function removeEntry(path: string, device: number, left: string[]): void {
  const stat = lstatOrNull(path);
  if (!stat) return;
  if (!stat.isDirectory()) {
    // A file, or a symbolic link — removed as a link, wherever it points.
    unlinkSync(path);
    return;
  }
  if (stat.dev !== device) {
    left.push(`${path} (another file system is mounted there)`);
    return;
  }
  const before = left.length;
  for (const name of readdirSync(path)) removeEntry(join(path, name), device, left);
  if (left.length === before) rmdirSync(path);
}

/**
 * Deletes the agent's binary: a file, or a symbolic link (as a link). True when it was removed,
 * false when it was already gone; a directory is never removed.
 */
export function removeBinary(path: string): boolean {
  const stat = lstatOrNull(path);
  if (!stat) return false;
  if (stat.isDirectory()) throw new Error(`the binary ${path} is a directory; not removed`);
  unlinkSync(path);
  return true;
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

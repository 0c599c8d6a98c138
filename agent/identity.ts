import { generateKeyPairSync } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readPrivateKeyFile } from '../private-key-file';
import { AgentError } from './errors';

/** What `join` writes to `DIR/identity.json` (mode 0600): who this node is and where it answers. */
export const IdentitySchema = z.object({
  nodeId: z.string().regex(/^node_[0-9a-z]{26}$/),
  credential: z.string().startsWith('ddn_'),
  clusterId: z.string().min(1),
  caPublicKey: z.string().includes('PUBLIC KEY'),
  api: z.url(),
  joinedAt: z.iso.datetime(),
});

export type Identity = z.infer<typeof IdentitySchema>;

/** The files of a data directory. */
export function dataFiles(dir: string) {
  return {
    identity: join(dir, 'identity.json'),
    key: join(dir, 'node.key'),
    journal: join(dir, 'journal.jsonl'),
    /** A finished `run` command's output, until the API has it. */
    outputs: join(dir, 'command-output'),
    pid: join(dir, 'agent.pid'),
  };
}

/** Files that `join --reset` moves aside: the identity and everything recorded under it. */
const RESET_FILES = ['identity', 'key', 'journal', 'outputs'] as const;

/**
 * The identity stored in `dir`, or null when none was written. A file that exists but does not
 * load is an error, never "not joined": joining over it would orphan a node the API still knows.
 */
export function readIdentity(dir: string): Identity | null {
  const file = dataFiles(dir).identity;
  if (!existsSync(file)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new AgentError(
      `${file} does not load (${(error as Error).message}); 'join --reset --yes' starts over`,
    );
  }
  const result = IdentitySchema.safeParse(parsed);
  if (!result.success) {
    throw new AgentError(`${file} is not a node identity; 'join --reset --yes' starts over`);
  }
  return result.data;
}

/** The identity, or a clear error when `dir` holds none. */
export function requireIdentity(dir: string): Identity {
  const identity = readIdentity(dir);
  if (!identity) throw new AgentError(`no node identity in ${dir}; run 'drydock-agent join' first`);
  return identity;
}

/** Makes the data directory (mode 0700); refuses one that is a symbolic link. */
export function prepareDataDir(dir: string): void {
  if (existsSync(dir) && lstatSync(dir).isSymbolicLink()) {
    throw new AgentError(`the data directory ${dir} is a symbolic link; give the real directory`);
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** A fresh Ed25519 key pair: the private key as PKCS8 PEM, the public key as SPKI PEM. */
export function newKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export function writePrivateKey(dir: string, pem: string): void {
  writeSecretFile(dataFiles(dir).key, pem);
}

export function writeIdentity(dir: string, identity: Identity): void {
  writeSecretFile(dataFiles(dir).identity, `${JSON.stringify(identity, null, 2)}\n`);
}

/** Trusts `caPublicKey` from now on: identity.json rewritten atomically, the rest of it kept. */
export function updateCaPublicKey(dir: string, caPublicKey: string): void {
  writeIdentity(dir, { ...requireIdentity(dir), caPublicKey });
}

/** Uses a renewed credential from now on: identity.json rewritten atomically, the rest of it kept. */
export function updateCredential(dir: string, credential: string): void {
  writeIdentity(dir, { ...requireIdentity(dir), credential });
}

/**
 * The node's private key (PKCS8 PEM), as `join` wrote it; refused, as ssh refuses an identity file,
 * when its group or others may read it.
 */
export function readPrivateKey(dir: string): string {
  try {
    return readPrivateKeyFile(dataFiles(dir).key, 'the node key');
  } catch (error) {
    throw new AgentError(
      `${(error as Error).message}; the node renews its credential with this key ('join --reset --yes' starts over with a new one)`,
    );
  }
}

/**
 * Moves the identity, key and journal aside as `<name>.reset-<timestamp>`; returns the new paths.
 * Nothing is deleted: an operator may still want the old journal.
 */
export function moveAside(dir: string, now = new Date()): string[] {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const files = dataFiles(dir);
  const moved: string[] = [];
  for (const name of RESET_FILES) {
    const file = files[name];
    if (!existsSync(file)) continue;
    const target = `${file}.reset-${stamp}`;
    renameSync(file, target);
    moved.push(target);
  }
  return moved;
}

/**
 * Writes a file only its owner may read, atomically: a crash leaves the old file or the new one,
 * and the rename replaces a symbolic link planted at the name instead of writing through it.
 */
function writeSecretFile(file: string, text: string): void {
  const temporary = `${file}.tmp-${process.pid}`;
  rmSync(temporary, { force: true });
  writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
  renameSync(temporary, file);
}

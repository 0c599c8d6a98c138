import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateCa } from '../ca';
import { encodePurgePayload, signPayload } from '../domain/signing';
import type { AgentCommand, CommandContext } from './commands';
import { purgeHandler, removeBinary, removeDataDir, simulatedPurgeHandler } from './purge';

const ca = generateCa();
const NODE = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
const OTHER = 'node_01k5w8v3x9q2m4n6p8r0s2t4v8';
const COMMAND = 'cmd_01k5w8v3x9q2m4n6p8r0s2t4v7';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function scratch(): string {
  const root = mkdtempSync(join(tmpdir(), 'drydock-purge-unit-'));
  roots.push(root);
  return root;
}

function command(claims: { nodeId?: string; clusterId?: string } = {}, key = ca): AgentCommand {
  const payload = encodePurgePayload({
    clusterId: claims.clusterId ?? 'prod-eu',
    nodeId: claims.nodeId ?? NODE,
    commandId: COMMAND,
    kind: 'purge',
    issuedAt: new Date().toISOString(),
  });
  return {
    id: COMMAND,
    kind: 'purge',
    action: null,
    condition: null,
    args: null,
    payload,
    signature: signPayload(key.privateKey, payload),
    createdAt: new Date().toISOString(),
  };
}

function identityJson(nodeId = NODE): string {
  return JSON.stringify({
    nodeId,
    credential: 'ddn_secret',
    clusterId: 'prod-eu',
    caPublicKey: ca.publicKeyPem,
    api: 'http://127.0.0.1:8080',
    joinedAt: new Date().toISOString(),
  });
}

/** A data directory as `join` leaves it, plus what running leaves. */
function dataDir(root: string, identity: string | null = identityJson()): string {
  const dir = join(root, 'data');
  mkdirSync(dir, { mode: 0o700 });
  if (identity !== null) writeFileSync(join(dir, 'identity.json'), identity, { mode: 0o600 });
  writeFileSync(join(dir, 'node.key'), 'PRIVATE KEY', { mode: 0o600 });
  writeFileSync(join(dir, 'journal.jsonl'), '');
  mkdirSync(join(dir, 'runtimes', 'py311', 'bin'), { recursive: true });
  writeFileSync(join(dir, 'runtimes', 'py311', 'bin', 'python'), '#!/bin/sh\n');
  return dir;
}

function context(dir: string | undefined, lines: string[] = []): CommandContext {
  return {
    nodeId: NODE,
    clusterId: 'prod-eu',
    caPublicKey: ca.publicKeyPem,
    dataDir: dir,
    log: (_level, message) => void lines.push(message),
    signal: new AbortController().signal,
  };
}

describe('purge handler', () => {
  it('acks a purge of its own as final; only the after-ack step deletes the data directory and the binary', async () => {
    const root = scratch();
    const dir = dataDir(root);
    const binary = join(root, 'drydock-agent');
    writeFileSync(binary, '#!/bin/sh\n');
    const lines: string[] = [];
    const outcome = await purgeHandler({ binary })(command(), context(dir, lines));
    expect(outcome).toMatchObject({ outcome: 'ack', final: true, after: expect.any(Function) });
    expect(existsSync(join(dir, 'identity.json'))).toBe(true);

    await (outcome as { after: () => Promise<void> }).after();
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(binary)).toBe(false);
    expect(existsSync(root)).toBe(true);
    expect(lines).toEqual(['purged: data directory and binary removed']);
  });

  it('refuses, deleting nothing: a command that fails verification, a data directory without this node identity, or one that is a link', async () => {
    const root = scratch();
    const dir = dataDir(root);
    const binary = join(root, 'drydock-agent');
    writeFileSync(binary, '#!/bin/sh\n');
    const handle = purgeHandler({ binary });
    const refusals = [
      [command({}, generateCa()), context(dir), /^bad signature/],
      [command({ clusterId: 'other' }), context(dir), /^command is for cluster other, not prod-eu$/],
      [command({ nodeId: OTHER }), context(dir), new RegExp(`^command is for node ${OTHER}, not ${NODE}$`)],
      [{ ...command(), payload: null }, context(dir), /^unsigned purge command$/],
      [command(), context(undefined), /no data directory/],
      [command(), context(join(root, 'missing')), /does not exist; nothing deleted$/],
    ] as const;
    for (const [cmd, ctx, reason] of refusals) {
      expect(await handle(cmd, ctx)).toEqual({ outcome: 'refuse', reason: expect.stringMatching(reason) });
    }

    const bare = dataDir(scratch(), null);
    expect(await handle(command(), context(bare))).toEqual({
      outcome: 'refuse',
      reason: `no node identity in ${bare}; nothing deleted`,
    });

    const link = join(root, 'link');
    symlinkSync(dir, link);
    expect(await handle(command(), context(link))).toEqual({
      outcome: 'refuse',
      reason: `the data directory ${link} is a symbolic link; nothing deleted`,
    });

    expect(existsSync(join(dir, 'identity.json'))).toBe(true);
    expect(existsSync(join(dir, 'runtimes', 'py311', 'bin', 'python'))).toBe(true);
    expect(existsSync(binary)).toBe(true);
  });

  it('refuses a data directory whose identity is another node, does not load, or is a link', async () => {
    const handle = purgeHandler({});
    const other = dataDir(scratch(), identityJson(OTHER));
    expect(await handle(command(), context(other))).toEqual({
      outcome: 'refuse',
      reason: `${other} holds the identity of ${OTHER}, not ${NODE}; nothing deleted`,
    });
    const torn = dataDir(scratch(), '{"nodeId": "node_');
    expect(await handle(command(), context(torn))).toEqual({
      outcome: 'refuse',
      reason: `${join(torn, 'identity.json')} is not a node identity; nothing deleted`,
    });
    const root = scratch();
    writeFileSync(join(root, 'elsewhere.json'), identityJson());
    const linked = dataDir(root, null);
    symlinkSync(join(root, 'elsewhere.json'), join(linked, 'identity.json'));
    expect(await handle(command(), context(linked))).toEqual({
      outcome: 'refuse',
      reason: `${join(linked, 'identity.json')} is not a regular file; nothing deleted`,
    });
    for (const dir of [other, torn, linked]) expect(existsSync(join(dir, 'node.key'))).toBe(true);
  });

  it('simulated agents verify the same way and delete nothing', async () => {
    const dir = dataDir(scratch());
    expect(await simulatedPurgeHandler(command(), context(dir))).toEqual({ outcome: 'ack', final: true });
    expect(await simulatedPurgeHandler(command({}, generateCa()), context(dir))).toMatchObject({
      outcome: 'refuse',
    });
    expect(existsSync(join(dir, 'identity.json'))).toBe(true);
  });
});

describe('removeDataDir', () => {
  it('unlinks links inside as links: their targets, files and directories, stay untouched', () => {
    const root = scratch();
    const dir = dataDir(root);
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'precious.txt'), 'keep me');
    symlinkSync(join(outside, 'precious.txt'), join(dir, 'file-link'));
    symlinkSync(outside, join(dir, 'dir-link'));
    symlinkSync(outside, join(dir, 'runtimes', 'py311', 'nested-link'));
    symlinkSync(join(root, 'nowhere'), join(dir, 'dangling'));

    removeDataDir(dir, NODE);
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('keep me');
    expect(lstatSync(outside).isDirectory()).toBe(true);
  });

  it('checks again before deleting: a directory swapped for a link, or without this identity, is left', () => {
    const root = scratch();
    const dir = dataDir(root);
    const link = join(root, 'link');
    symlinkSync(dir, link);
    expect(() => removeDataDir(link, NODE)).toThrow(/is a symbolic link; nothing deleted/);
    expect(() => removeDataDir(dir, OTHER)).toThrow(/holds the identity of/);
    expect(existsSync(join(dir, 'identity.json'))).toBe(true);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  });
});

describe('removeBinary', () => {
  it('removes a file, or a link as a link; says when it was already gone; never a directory', () => {
    const root = scratch();
    const real = join(root, 'drydock-agent.mjs');
    writeFileSync(real, '');
    const link = join(root, 'drydock-agent');
    symlinkSync(real, link);
    expect(removeBinary(link)).toBe(true);
    expect(existsSync(real)).toBe(true);
    expect(removeBinary(real)).toBe(true);
    expect(removeBinary(real)).toBe(false);
    expect(() => removeBinary(root)).toThrow(/is a directory; not removed/);
    expect(existsSync(root)).toBe(true);
  });
});

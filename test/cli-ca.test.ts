import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCa } from '../ca';
import { caFingerprint } from '../domain/signing';
import { BIN } from './support/cli';
import { runNode } from './support/run-process';

const scratch = mkdtempSync(join(tmpdir(), 'drydock-ca-init-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const caInit = (flags: string[], env: NodeJS.ProcessEnv = {}) => runNode([BIN, 'ca', 'init', ...flags], env);
const modeOf = (file: string) => statSync(file).mode & 0o777;

describe('drydock ca init', () => {
  it('writes a 0600 Ed25519 key, making the directory, that loadCa reads; prints its public key and fingerprint', async () => {
    const file = join(scratch, 'new', 'dir', 'ca.pem');
    const run = await caInit(['--out', file]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(modeOf(file)).toBe(0o600);
    const ca = loadCa({ file, home: scratch });
    expect(ca.privateKey.asymmetricKeyType).toBe('ed25519');
    expect(readFileSync(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(run.stdout).toBe(
      `Wrote:        ${file} (mode 0600)\nFingerprint:  ${caFingerprint(ca.publicKeyPem)}\n${ca.publicKeyPem}`,
    );
    // The private half is written to the file only.
    expect(run.stdout).not.toContain('PRIVATE');
  });

  it('refuses to overwrite a key, saying how to rotate; the file stays as it was', async () => {
    const file = join(scratch, 'kept.pem');
    expect((await caInit(['--out', file])).code).toBe(0);
    const before = readFileSync(file);
    const again = await caInit(['--out', file]);
    expect(again.code).toBe(3);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(
      `error: CONFLICT: ${file} already exists; left as it is. Replacing a CA key strands the agents that trust it: ` +
        'to move to a new key, write it to another file (drydock ca init --out FILE) and rotate with ' +
        'DRYDOCK_CA_PREVIOUS_KEY_FILES (docs/security.md)\n',
    );
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(modeOf(file)).toBe(0o600);
    // No draft left beside it.
    expect(readdirSync(scratch).filter((name) => name.startsWith('kept.pem'))).toEqual(['kept.pem']);
  });

  it('refuses any existing file, not only a key', async () => {
    const file = join(scratch, 'notes.txt');
    writeFileSync(file, 'not a key');
    expect((await caInit(['--out', file])).code).toBe(3);
    expect(readFileSync(file, 'utf8')).toBe('not a key');
  });

  it('two at once on one file: one writes it, the other is refused, the file is the winner’s key', async () => {
    const file = join(scratch, 'raced.pem');
    const runs = await Promise.all([caInit(['--out', file, '--json']), caInit(['--out', file, '--json'])]);
    expect(runs.map((run) => run.code).sort()).toEqual([0, 3]);
    const winner = JSON.parse(runs.find((run) => run.code === 0)!.stdout) as { publicKey: string };
    expect(loadCa({ file, home: scratch }).publicKeyPem).toBe(winner.publicKey);
  });

  it('writes to DRYDOCK_CA_KEY_FILE by default, else to DRYDOCK_HOME/ca-key.pem; --json for scripts', async () => {
    const named = join(scratch, 'named.pem');
    const byEnv = await caInit(['--json'], {
      DRYDOCK_CA_KEY_FILE: named,
      DRYDOCK_HOME: join(scratch, 'unused'),
    });
    expect(byEnv.code).toBe(0);
    const result = JSON.parse(byEnv.stdout) as { file: string; fingerprint: string; publicKey: string };
    const ca = loadCa({ file: named, home: scratch });
    expect(result).toEqual({
      file: named,
      fingerprint: caFingerprint(ca.publicKeyPem),
      publicKey: ca.publicKeyPem,
    });

    const home = join(scratch, 'home');
    const byHome = await caInit(['--json'], { DRYDOCK_HOME: home });
    expect(byHome.code).toBe(0);
    expect((JSON.parse(byHome.stdout) as { file: string }).file).toBe(join(home, 'ca-key.pem'));
    expect(readdirSync(join(scratch, 'home'))).toEqual(['ca-key.pem']);
    expect(modeOf(join(home, 'ca-key.pem'))).toBe(0o600);
  });
});

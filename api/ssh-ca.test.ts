import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSshCa } from './ssh-ca';

const dir = mkdtempSync(join(tmpdir(), 'drydock-ssh-ca-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the SSH CA key file', () => {
  it('is made in DRYDOCK_HOME with mode 0600 when unset, and loaded again as the same key', () => {
    const home = join(dir, 'home');
    const made = loadSshCa({ home });
    expect(statSync(join(home, 'ssh-ca-key.pem')).mode & 0o777).toBe(0o600);
    expect(loadSshCa({ home }).publicKey).toBe(made.publicKey);
  });

  it("takes ssh-keygen's key, and its fingerprint is the one ssh-keygen -l shows", () => {
    const file = join(dir, 'ssh-ca');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
    const ca = loadSshCa({ file, home: dir });
    const shown = execFileSync('ssh-keygen', ['-l', '-f', `${file}.pub`], { encoding: 'utf8' });
    expect(shown.split(' ')[1]).toBe(ca.fingerprint);
    expect(ca.publicKey.split(' ').slice(0, 2)).toEqual(
      execFileSync('ssh-keygen', ['-y', '-f', file], { encoding: 'utf8' }).trim().split(' ').slice(0, 2),
    );
  });

  it('is refused when its group or others may read it, saying how to fix it; a key of another type too', () => {
    const file = join(dir, 'open.pem');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
    chmodSync(file, 0o640);
    expect(() => loadSshCa({ file, home: dir })).toThrow(
      `DRYDOCK_SSH_CA_KEY_FILE: UNPROTECTED PRIVATE KEY FILE ${file}: permissions 0640 are too open, a private key must not be accessible by group or others (chmod 600 ${file})`,
    );
    const rsa = join(dir, 'rsa');
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '2048', '-N', '', '-f', rsa]);
    expect(() => loadSshCa({ file: rsa, home: dir })).toThrow(
      `the SSH CA key ${rsa} is rsa: it must be Ed25519`,
    );
    const missing = join(dir, 'missing.pem');
    expect(() => loadSshCa({ file: missing, home: dir })).toThrow(/^DRYDOCK_SSH_CA_KEY_FILE: ENOENT/);
  });
});

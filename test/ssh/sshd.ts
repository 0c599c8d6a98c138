import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../scripts/services/process';
import { sshFilesIn } from '../../agent/ssh-files';
import { eventually } from '../support/harness';

const run = promisify(execFile);

/** Debian's sshd (openssh-server; `.ci/run` installs it when absent). */
export const SSHD = '/usr/sbin/sshd';

export interface Sshd {
  port: number;
  /** What sshd said so far (`-e`: its log on stderr). */
  log(): string;
  stop(): Promise<void>;
}

/**
 * The real sshd on a free port of 127.0.0.1, as the current user, configured with the lines
 * docs/security.md#break-glass-ssh gives for `sshDir` (the directory the agent writes), and no other
 * way in: no passwords, no authorized_keys. `StrictModes no`: the test's directories are under the
 * world-writable temp directory, which sshd would refuse for the principals file.
 */
export async function startSshd(sshDir: string): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'drydock-sshd-'));
  // sshd refuses to start without its privilege separation directory (made at boot on a real host).
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'host_key')]);
  const port = await freePort();
  const files = sshFilesIn(sshDir);
  const config = join(dir, 'sshd_config');
  writeFileSync(
    config,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `PidFile ${join(dir, 'sshd.pid')}`,
      'UsePAM no',
      'StrictModes no',
      'LogLevel VERBOSE',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'AuthorizedKeysFile none',
      'PermitRootLogin prohibit-password',
      `TrustedUserCAKeys ${files.ca}`,
      `AuthorizedPrincipalsFile ${files.principals}/%u`,
      `RevokedKeys ${files.krl}`,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn(SSHD, ['-D', '-e', '-f', config], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`sshd exited ${child.exitCode}:\n${log}`);
    return accepts(port);
  }, 10_000);
  return {
    port,
    log: () => log,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** What the real ssh client did: its exit code and output. */
export interface SshRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** ssh's options for a test login: no config, no agent, no host key prompt, nothing asked. */
export function sshOptions(port: number): string[] {
  return [
    '-F/dev/null',
    `-p${port}`,
    '-oIdentitiesOnly=yes',
    '-oIdentityAgent=none',
    '-oBatchMode=yes',
    '-oStrictHostKeyChecking=no',
    '-oUserKnownHostsFile=/dev/null',
    '-oLogLevel=ERROR',
  ];
}

/** The real `ssh` as root@127.0.0.1 with private key `key` and certificate file `cert`, running `command`. */
export async function ssh(port: number, key: string, cert: string, command: string): Promise<SshRun> {
  return new Promise((resolve) => {
    execFile(
      'ssh',
      [...sshOptions(port), '-i', key, `-oCertificateFile=${cert}`, 'root@127.0.0.1', command],
      { timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A fresh key pair made by ssh-keygen in `dir`: the private key's path (the public one is `<path>.pub`). */
export async function userKey(dir: string, name: string, type = 'ed25519', bits?: number): Promise<string> {
  const file = join(dir, name);
  await run('ssh-keygen', [
    '-q',
    '-t',
    type,
    ...(bits ? ['-b', String(bits)] : []),
    '-N',
    '',
    '-C',
    name,
    '-f',
    file,
  ]);
  return file;
}

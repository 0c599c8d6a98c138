import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DURATION_PATTERN } from '../../domain/duration';
import { defineCommand, type Command } from '../command';
import { CliError } from '../errors';
import { reasonFlag } from './flags';

/**
 * Break-glass SSH (docs/security.md#break-glass-ssh): a short-lived certificate for the caller's
 * key, valid as root on one node, and `ssh` run with it.
 */

/** The public keys tried when `--key` is not given, in this order. */
const DEFAULT_KEYS = ['id_ed25519.pub', 'id_rsa.pub'];

function publicKeyFile(given: string | undefined, env: Record<string, string | undefined>): string {
  if (given !== undefined) {
    const file = resolve(given.endsWith('.pub') ? given : `${given}.pub`);
    if (!existsSync(file)) throw new CliError('usage', `--key: ${file} does not exist`);
    return file;
  }
  const dir = join(env.HOME ?? homedir(), '.ssh');
  const found = DEFAULT_KEYS.map((name) => join(dir, name)).find((file) => existsSync(file));
  if (!found) {
    throw new CliError(
      'usage',
      `no ${DEFAULT_KEYS.join(' or ')} in ${dir}: give --key, or make one with ssh-keygen -t ed25519`,
    );
  }
  return found;
}

/** Runs `ssh` with the terminal's stdio; resolves to its exit code. */
function runSsh(args: string[]): Promise<number> {
  return new Promise((done, fail) => {
    const child = spawn('ssh', args, { stdio: 'inherit' });
    child.once('error', (error) => fail(new CliError('SSH_FAILED', `could not run ssh: ${error.message}`)));
    child.once('exit', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

const ssh = defineCommand({
  words: ['nodes', 'ssh'],
  summary:
    'Break-glass SSH: a short-lived certificate for your key, valid as root on this node only, and ssh with it',
  operands: [{ name: 'NODE', type: 'node' }],
  flags: {
    reason: { ...reasonFlag, required: true },
    key: {
      type: 'string',
      value: 'FILE',
      help: 'your public key (the private key is FILE without .pub)',
      default: '~/.ssh/id_ed25519.pub, else ~/.ssh/id_rsa.pub',
    },
    ttl: {
      type: 'string',
      value: 'DURATION',
      pattern: DURATION_PATTERN,
      patternHint: 'a duration such as 15m or 1h (at most 1h)',
      help: 'how long the certificate is valid',
      default: '15m',
    },
    host: {
      type: 'string',
      value: 'HOST',
      help: 'where to connect',
      default: "the node's hostname, as its agent reported it",
    },
    user: { type: 'string', value: 'USER', help: 'the account to log in as', default: 'root' },
    'ssh-arg': {
      type: 'list',
      value: 'ARG',
      maxItems: 32,
      repeatable: true,
      whole: true,
      help: 'one more argument for ssh, before the host (repeat for more), e.g. --ssh-arg=-p2222',
    },
    run: {
      type: 'string',
      value: 'COMMAND',
      help: 'a command to run on the node instead of a login shell',
    },
    'print-cert': {
      type: 'boolean',
      help: 'print the certificate (one line, for <key>-cert.pub) and do not run ssh',
    },
  },
  async run({ api, out, args, flags, env }) {
    const pubFile = publicKeyFile(flags.key, env);
    const issued = await api.POST('/v1/nodes/{id}/ssh-certificates', {
      params: { path: { id: args.NODE } },
      body: { publicKey: readFileSync(pubFile, 'utf8').trim(), reason: flags.reason, ttl: flags.ttl },
    });
    if (flags['print-cert'] || out.json) {
      out.result(issued, () => issued.certificate);
      return 0;
    }
    const host =
      flags.host ?? (await api.GET('/v1/nodes/{id}', { params: { path: { id: args.NODE } } })).hostname;
    out.note(
      `certificate ${issued.serial} for ${issued.principal}, valid until ${issued.validBefore}; ssh ${flags.user ?? 'root'}@${host}`,
    );
    const dir = mkdtempSync(join(tmpdir(), 'drydock-ssh-'));
    try {
      const certFile = join(dir, 'cert.pub');
      writeFileSync(certFile, `${issued.certificate}\n`, { mode: 0o600 });
      return await runSsh([
        '-i',
        pubFile.slice(0, -'.pub'.length),
        '-o',
        `CertificateFile=${certFile}`,
        '-o',
        'IdentitiesOnly=yes',
        ...(flags['ssh-arg'] ?? []),
        `${flags.user ?? 'root'}@${host}`,
        ...(flags.run === undefined ? [] : [flags.run]),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
});

export const sshCommands: readonly Command[] = [ssh];

import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { defaultCaKeyFile, generateCa } from '../../ca';
import { loadConfig } from '../../config';
import { caFingerprint } from '../../domain/signing';
import { defineCommand, type Command } from '../command';
import { CliError } from '../errors';
import { fields } from '../output';

/** `drydock ca init`: makes the cluster CA key a deployment hands every API process and worker. */

const init = defineCommand({
  words: ['ca', 'init'],
  summary:
    'Write a new cluster CA key (Ed25519, mode 0600) and print its public key; never overwrites a file',
  operands: [],
  flags: {
    out: {
      type: 'string',
      value: 'FILE',
      maxLength: 4096,
      help: 'where to write the key',
      default: '$DRYDOCK_CA_KEY_FILE, else $DRYDOCK_HOME/ca-key.pem',
    },
  },
  async run({ out, flags, env }) {
    const file = resolve(flags.out ?? defaultFile(env));
    const ca = generateCa();
    writeNewFile(file, ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
    const written = { file, fingerprint: caFingerprint(ca.publicKeyPem), publicKey: ca.publicKeyPem };
    out.result(written, () =>
      [
        fields([
          ['Wrote', `${file} (mode 0600)`],
          ['Fingerprint', written.fingerprint],
        ]),
        ca.publicKeyPem,
      ].join('\n'),
    );
  },
});

function defaultFile(env: Record<string, string | undefined>): string {
  try {
    const config = loadConfig(env);
    return config.DRYDOCK_CA_KEY_FILE ?? defaultCaKeyFile(config.DRYDOCK_HOME);
  } catch (error) {
    throw new CliError('CONFIG', (error as Error).message);
  }
}

/**
 * Writes `text` to `file`, mode 0600, only if no file is there. The key goes to a file of its own
 * first and is then hard-linked into place: linking refuses an existing name, so a key already
 * there (one agents may trust) is never replaced, even by a second `ca init` racing this one, and
 * the name never shows a half-written key.
 */
function writeNewFile(file: string, text: string): void {
  const draft = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(draft, text, { mode: 0o600, flag: 'wx' });
    linkSync(draft, file);
  } catch (error) {
    const { code, syscall, message } = error as NodeJS.ErrnoException;
    if (code === 'EEXIST' && syscall === 'link') {
      throw new CliError(
        'CONFLICT',
        `${file} already exists; left as it is. Replacing a CA key strands the agents that trust it: ` +
          'to move to a new key, write it to another file (drydock ca init --out FILE) and rotate with ' +
          'DRYDOCK_CA_PREVIOUS_KEY_FILES (docs/security.md)',
      );
    }
    throw new CliError('IO', `cannot write ${file}: ${message}`);
  } finally {
    rmSync(draft, { force: true });
  }
}

export const caCommands: Command[] = [init];

import { execFile } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiError, type Answer } from '@drydock/client';
import type { AgentClient } from './client';
import type { Log } from './log';

const run = promisify(execFile);

/** How often the agent asks for the SSH CA key and the revoked serials when `--ssh-refresh` is not given. */
export const DEFAULT_SSH_REFRESH_MS = 30_000;

/** The login account the principals file is written for: break-glass SSH is root's. */
export const SSH_LOGIN_USER = 'root';

/** What `GET /v1/agent/ssh` answers. */
export type SshTrust = Answer<'get', '/v1/agent/ssh'>;

/**
 * The files sshd reads for break-glass SSH (docs/security.md#break-glass-ssh), in `dir`:
 * `TrustedUserCAKeys DIR/ca.pub`, `AuthorizedPrincipalsFile DIR/principals/%u`, `RevokedKeys DIR/revoked.krl`.
 */
export function sshFilesIn(dir: string) {
  return {
    ca: join(dir, 'ca.pub'),
    principals: join(dir, 'principals'),
    rootPrincipals: join(dir, 'principals', SSH_LOGIN_USER),
    krl: join(dir, 'revoked.krl'),
  };
}

/**
 * Writes the node's SSH trust into `dir`, each file to a temporary name and renamed, so sshd reads
 * the old file or the new one, never half of one. The KRL is made by OpenSSH's own `ssh-keygen -k`
 * (installed wherever sshd is) from the revoked serials, and written first: a new CA key never
 * appears before the revocations of its certificates. sshd refuses every key while `RevokedKeys`
 * names a missing file, so a node takes no certificate before its agent's first refresh.
 */
export async function writeSshFiles(dir: string, trust: SshTrust, keygen = 'ssh-keygen'): Promise<void> {
  const files = sshFilesIn(dir);
  mkdirSync(files.principals, { recursive: true, mode: 0o755 });
  const temporary = (file: string) => `${file}.tmp-${process.pid}`;
  const write = (file: string, text: string) => {
    rmSync(temporary(file), { force: true });
    writeFileSync(temporary(file), text, { mode: 0o644, flag: 'wx' });
  };
  const spec = join(dir, `.krl-spec.tmp-${process.pid}`);
  try {
    write(files.ca, `${trust.caPublicKey}\n`);
    writeFileSync(spec, trust.revokedSerials.map((serial) => `serial: ${serial}\n`).join(''), {
      mode: 0o600,
    });
    rmSync(temporary(files.krl), { force: true });
    await run(keygen, ['-q', '-k', '-f', temporary(files.krl), '-s', temporary(files.ca), spec]);
    renameSync(temporary(files.krl), files.krl);
    renameSync(temporary(files.ca), files.ca);
    write(files.rootPrincipals, `${trust.principal}\n`);
    renameSync(temporary(files.rootPrincipals), files.rootPrincipals);
  } finally {
    for (const file of [spec, temporary(files.ca), temporary(files.krl), temporary(files.rootPrincipals)]) {
      rmSync(file, { force: true });
    }
  }
}

/**
 * `run --ssh-dir`: the node's SSH trust asked for at start and every `everyMs`, and written when it
 * differs from what this agent last wrote. A failure is logged once and tried again at the next
 * refresh; the files written before stay.
 */
export class SshFiles {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private written: string | null = null;
  private failing = false;

  constructor(
    private readonly options: {
      /** The session's client: it carries the node's credential as renewed. */
      client: AgentClient;
      dir: string;
      everyMs: number;
      log: Log;
    },
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.refresh().finally(() => {
        this.running = null;
        if (this.timer) this.timer = setTimeout(tick, this.options.everyMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private async refresh(): Promise<void> {
    const { dir, log } = this.options;
    try {
      const trust = await this.options.client.sshTrust();
      const answer = JSON.stringify(trust);
      if (answer !== this.written) {
        await writeSshFiles(dir, trust);
        this.written = answer;
        log('info', `SSH files written to ${dir}: ${trust.revokedSerials.length} revoked certificate(s)`, {
          sshDir: dir,
          revokedSerials: trust.revokedSerials,
        });
      }
      this.failing = false;
    } catch (error) {
      // The API away or refusing, or ssh-keygen failing: the files written before stay.
      const message = error instanceof ApiError || error instanceof Error ? error.message : String(error);
      if (!this.failing) log('warn', `SSH files not refreshed: ${message}; trying again`, { sshDir: dir });
      this.failing = true;
    }
  }
}

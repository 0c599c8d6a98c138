import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from 'node:http';
import { afterAll, beforeAll, expect } from 'vitest';
import { closeServer, listen } from '../../api/server';
import { freePort } from '../../scripts/services/process';
import { call } from './fixtures';
import type { Harness } from './harness';

/** The real `drydock` binary, run the way a person or a script would. */
export const BIN = fileURLToPath(new URL('../../bin/drydock.mjs', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Cli {
  /** The base URL of the API listening for this file. */
  api: string;
  /** A port nothing listens on: a request sent there would fail with exit 1, not 2. */
  deadApi: string;
  /** Runs `drydock ARGS` against the test API with the operator key unless told otherwise. */
  drydock(args: string[], options?: { token?: string | null; api?: string }): Promise<Run>;
  /**
   * Runs every line against the dead API and expects each refused before anything is sent: exit 2,
   * no stdout, stderr `error: usage: MESSAGE…` (the whole of it with `exact`) and the command's help.
   */
  refuses(lines: readonly Refusal[], options?: { exact?: boolean }): Promise<void>;
}

/** A command line and the usage error it must get (its start, or all of it). */
export type Refusal = readonly [args: string[], message: string];

/** A flag's value in a `line`: text or a number as given, `true` for a switch, a list as the flag repeated. */
export type FlagArg = string | number | true | readonly string[];

/** An operand, or flags by name. */
export type LinePart = string | Readonly<Record<string, FlagArg>>;

/**
 * A command line from its words, operands and flags: `line('nodes drain', id, { reason: 'rma', wait: true })`
 * is `['nodes', 'drain', id, '--reason', 'rma', '--wait']`. Flags come in the order given.
 */
export function line(words: string, ...rest: LinePart[]): string[] {
  const args = words.split(' ');
  for (const part of rest) {
    if (typeof part === 'string') {
      args.push(part);
      continue;
    }
    for (const [name, value] of Object.entries(part)) {
      if (value === true) args.push(`--${name}`);
      else if (Array.isArray(value)) for (const item of value) args.push(`--${name}`, item);
      else args.push(`--${name}`, String(value));
    }
  }
  return args;
}

/** Listens with the harness's app for the file's tests, and runs the binary against it. */
export function useCli(h: Harness): Cli {
  let server: Server | undefined;
  const cli: Cli = {
    api: '',
    deadApi: '',
    drydock(args, options = {}) {
      // No sign-in of the machine's user (drydock login) is read: a config dir nothing writes to.
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        DRYDOCK_API: options.api ?? cli.api,
        XDG_CONFIG_HOME: join(tmpdir(), `drydock-test-no-sign-ins-${process.pid}`),
      };
      const token = options.token === undefined ? h.operatorKey : options.token;
      if (token === null) delete env.DRYDOCK_TOKEN;
      else env.DRYDOCK_TOKEN = token;
      return new Promise((resolve) => {
        execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          resolve({ code, stdout, stderr });
        });
      });
    },
    async refuses(lines, { exact = false } = {}) {
      // Against a dead API: a line that got as far as a request would exit 1, not 2.
      const results = await Promise.all(lines.map(([args]) => cli.drydock(args, { api: cli.deadApi })));
      results.forEach((result, i) => {
        const [args, message] = lines[i]!;
        const said = args.join(' ');
        const hint = `run 'drydock ${args[0]} ${args[1]} --help' for usage\n`;
        expect(result.code, said).toBe(2);
        expect(result.stdout, said).toBe('');
        if (exact) expect(result.stderr, said).toBe(`error: usage: ${message}\n${hint}`);
        else {
          const [first, second, ...more] = result.stderr.split('\n');
          expect(first, said).toMatch(new RegExp(`^error: usage: ${escapeRegExp(message)}`));
          expect([second, ...more].join('\n'), said).toBe(hint);
        }
      });
    },
  };

  beforeAll(async () => {
    const listening = await listen(h.deps, 0);
    server = listening.server;
    cli.api = `http://127.0.0.1:${listening.port}`;
    cli.deadApi = `http://127.0.0.1:${await freePort()}`;
  });

  afterAll(async () => {
    if (server) await closeServer(server);
  });

  return cli;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `GET /v1/operations/{id}`, as `--wait` asks it again and again (counted by `answered`). */
export const OPERATION_READ = { method: 'GET', route: '/v1/operations/:id' };

/** The lines of a human table, without its header. */
export const rows = (stdout: string) => stdout.trimEnd().split('\n').slice(1);

/** The node as the API shows it to the operator. */
export async function readNode(h: Harness, id: string) {
  return (await call(h, 'GET', `/v1/nodes/${id}`)).body;
}

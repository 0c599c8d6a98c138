import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll } from 'vitest';
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
}

/** Listens with the harness's app for the file's tests, and runs the binary against it. */
export function useCli(h: Harness): Cli {
  let server: ServerType | undefined;
  const cli: Cli = {
    api: '',
    deadApi: '',
    drydock(args, options = {}) {
      const env: NodeJS.ProcessEnv = { ...process.env, DRYDOCK_API: options.api ?? cli.api };
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

/** `GET /v1/operations/{id}`, as `--wait` asks it again and again (counted by `answered`). */
export const OPERATION_READ = { method: 'GET', route: '/v1/operations/:id' };

/** The lines of a human table, without its header. */
export const rows = (stdout: string) => stdout.trimEnd().split('\n').slice(1);

/** The node as the API shows it to the operator. */
export async function readNode(h: Harness, id: string) {
  return (await call(h, 'GET', `/v1/nodes/${id}`)).body;
}

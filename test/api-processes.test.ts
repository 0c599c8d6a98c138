import { spawn, type ChildProcess } from 'node:child_process';
import { request, Agent } from 'node:http';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { freePort } from '../scripts/services/process';
import { apiProcessEnv, eventually, useHarness } from './support/harness';
import { parseSamples, valueOf } from './support/scrape';

const h = useHarness({ worker: false });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request on `agent`'s connection (a fresh connection with the default: none kept). */
function send(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; agent?: Agent } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    // A connection handed to a process just as it was killed is never answered: not waited for.
    req.setTimeout(5_000, () => req.destroy(new Error(`${path}: no answer in 5 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The pid of the API process that answers `/readyz` on this connection. */
async function processOf(port: number, agent?: Agent): Promise<number> {
  const answer = await send(port, '/readyz', { agent });
  expect(answer.status).toBe(200);
  const pid = (JSON.parse(answer.body) as { process: number }).process;
  seenPids.add(pid);
  return pid;
}

/** Every API process seen, so that none outlives a failed test. */
const seenPids = new Set<number>();

/** The API (`entry/api.ts`) with API_PROCESSES=2; resolves once both of its processes listen. */
async function startApi(port: number, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'entry/api.ts'], {
    env: {
      ...process.env,
      API_PROCESSES: '2',
      ...apiProcessEnv(h, port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let listening = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the API exited (${code}) before it listened`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('listening') && ++listening === 2) resolve();
    });
  });
  return child;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('API_PROCESSES=2: two API processes on one port', () => {
  it(
    'both answer, a console session holds on either, a killed one is replaced, SIGTERM stops all',
    {
      timeout: 120_000,
    },
    async () => {
      const port = await freePort();
      const api = await startApi(port);
      const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
      try {
        // Connections are handed to the processes in turn: new ones reach both.
        const pids = new Set<number>();
        await eventually(async () => {
          pids.add(await processOf(port));
          return pids.size === 2;
        });
        expect(pids.has(api.pid!)).toBe(false);

        // Signed in through one process, the session is known to both.
        const signIn = await send(port, '/console/sign-in', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
          body: new URLSearchParams({ key: h.operatorKey }).toString(),
        });
        expect(signIn.status).toBe(303);
        const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
        const servedBy = new Set<number>();
        await eventually(async () => {
          // One connection: the pid and the page come from the same process.
          const agent = new Agent({ keepAlive: true, maxSockets: 1 });
          try {
            const pid = await processOf(port, agent);
            const page = await send(port, '/console', { headers: { cookie }, agent });
            expect(page.status).toBe(200);
            expect(page.body).toContain('Sign out');
            servedBy.add(pid);
          } finally {
            agent.destroy();
          }
          return servedBy.size === 2;
        });

        // A scrape of the port counts the requests of both processes, whichever one answers it.
        const healthz = { name: 'drydock_http_request_duration_seconds_count', route: '/healthz' };
        const before = valueOf(parseSamples((await send(port, '/metrics')).body), healthz.name, {
          route: healthz.route,
        });
        const answeredBy = new Set<number>();
        for (let i = 0; i < 10; i++) {
          const agent = new Agent({ keepAlive: true, maxSockets: 1 });
          try {
            answeredBy.add(await processOf(port, agent));
            expect((await send(port, '/healthz', { agent })).status).toBe(200);
          } finally {
            agent.destroy();
          }
        }
        expect(answeredBy.size).toBe(2);
        for (let i = 0; i < 4; i++) {
          const after = parseSamples((await send(port, '/metrics')).body);
          expect(valueOf(after, healthz.name, { route: healthz.route }) - before).toBe(10);
        }

        // A process that dies is replaced; the port answers all along.
        const [victim] = [...pids];
        process.kill(victim!, 'SIGKILL');
        const now = await eventually(async () => {
          const seen = new Set<number>();
          for (let i = 0; i < 4; i++) seen.add(await processOf(port).catch(() => victim!));
          return seen.size === 2 && !seen.has(victim!) ? seen : undefined;
        }, 20_000);
        expect(alive(victim!)).toBe(false);

        // SIGTERM to the primary: every process stops gracefully, and it exits 0.
        api.kill('SIGTERM');
        expect(await exited).toBe(0);
        for (const pid of now) expect(alive(pid)).toBe(false);
      } finally {
        if (api.exitCode === null && api.signalCode === null) api.kill('SIGKILL');
        for (const pid of seenPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  );
});

describe('API_PROCESSES=2: the per-address rate limits', () => {
  it(
    'hold in total: failed authentications from one address get 401 up to the burst once, whichever process answers',
    { timeout: 120_000 },
    async () => {
      const port = await freePort();
      const api = await startApi(port, {
        // Nothing comes back during the test (one more every 100 minutes); the client names the
        // address it stands for in X-Forwarded-For.
        DRYDOCK_AUTH_FAILURES_PER_MINUTE: '0.01',
        DRYDOCK_AUTH_FAILURES_BURST: '10',
        DRYDOCK_TRUSTED_PROXIES: '127.0.0.1',
      });
      const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
      try {
        const statusesBy = new Map<number, number[]>();
        for (let i = 0; i < 30; i++) {
          // One connection: the pid and the answer come from the same process.
          const agent = new Agent({ keepAlive: true, maxSockets: 1 });
          try {
            const pid = await processOf(port, agent);
            const answer = await send(port, '/v1/nodes', {
              headers: { authorization: 'Bearer wrong', 'x-forwarded-for': '203.0.113.77' },
              agent,
            });
            statusesBy.set(pid, [...(statusesBy.get(pid) ?? []), answer.status]);
          } finally {
            agent.destroy();
          }
        }
        expect(statusesBy.size).toBe(2);
        const statuses = [...statusesBy.values()].flat();
        expect(statuses.filter((status) => status === 401)).toHaveLength(10);
        expect(statuses.filter((status) => status === 429)).toHaveLength(20);
        // Each process refused some: it counted the other's failures as its own.
        for (const [pid, seen] of statusesBy) expect(seen, `process ${pid}`).toContain(429);
        api.kill('SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        if (api.exitCode === null && api.signalCode === null) api.kill('SIGKILL');
        for (const pid of seenPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      }
    },
  );
});

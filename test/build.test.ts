import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isBuiltin } from 'node:module';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDist, PROGRAMS, type BuiltDist } from '../scripts/build';
import { freePort } from '../scripts/services/process';
import { drainWorkflowId } from '../workflows/definitions';
import { ensureLivenessSweep } from '../workflows/liveness-client';
import { useEmptyDatabases } from './support/empty-databases';
import { workflowResult } from './support/builders';
import { seedNode, seedPool } from './support/fixtures';
import { apiProcessEnv, eventually, useHarness } from './support/harness';
import { runNode } from './support/run-process';
import { killWorker, startWorkerProcess } from './support/worker-process';

const h = useHarness({ worker: false });
const empty = useEmptyDatabases('build_migrate');
const run = promisify(execFile);

/** What the processes get: this run's environment without a loader tsx could have put in NODE_OPTIONS. */
const { NODE_OPTIONS: _loader, ...plainEnv } = process.env;

let built: BuiltDist;
const children: ChildProcess[] = [];

beforeAll(async () => {
  // Inside the project, so that the build finds node_modules as dist/ does (next to it).
  built = await buildDist({ outDir: resolve('.drydock', 'test', `dist-${randomBytes(4).toString('hex')}`) });
  // The worker from dist starts the namespace's liveness controller unless it runs; on this file's
  // queue it would sweep this database and mark the seeded (silent) node unreachable.
  await ensureLivenessSweep(h.temporal, 'liveness-controller-parked');
}, 120_000);

afterAll(async () => {
  for (const child of children) await killWorker(child);
  if (built) await rm(built.outDir, { recursive: true, force: true });
});

/** `@scope/name/sub` → `@scope/name`, `name/sub` → `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** `node <dist>/api.js` on this file's database and queue; resolves once it listens. */
async function startDistApi(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [join(built.outDir, 'api.js')], {
    env: {
      ...plainEnv,
      ...apiProcessEnv(h, port),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`dist/api.js exited (${code}) before it listened`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('listening')) resolve();
    });
  });
  return child;
}

/** An OTLP/HTTP JSON collector that keeps the names of the spans it is sent. */
function startCollector(): Promise<{ server: Server; url: string; spanNames: Set<string> }> {
  const spanNames = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) spanNames.add(span.name);
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spanNames }),
    ),
  );
}

describe('npm run build (dist/)', () => {
  it('imports at run time only packages that are production dependencies', () => {
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const imported = new Set<string>();
    for (const output of Object.values(built.metafile.outputs)) {
      for (const entry of output.imports) {
        if (entry.external && !isBuiltin(entry.path)) imported.add(packageOf(entry.path));
      }
    }
    // The check sees the imports at all: the worker's SDK is one of them.
    expect(imported).toContain('@temporalio/worker');
    expect([...imported].filter((name) => !(name in manifest.dependencies))).toEqual([]);
    const programs = Object.keys(built.metafile.outputs).filter((file) => /\/[\w-]+\.js$/.test(file));
    for (const name of PROGRAMS) {
      expect(
        programs.some((file) => file.endsWith(`/${name}.js`)),
        name,
      ).toBe(true);
    }
  });

  it('runs the CLI, the agent and the bridge with plain node', async () => {
    const cli = await run(process.execPath, [join(built.outDir, 'drydock.js'), '--help'], { env: plainEnv });
    expect(cli.stdout).toContain('Usage: drydock');
    const agent = await run(process.execPath, [join(built.outDir, 'drydock-agent.js'), '--help'], {
      env: plainEnv,
    });
    expect(agent.stdout).toContain('Usage: drydock-agent');
    const bridge = await run(process.execPath, [join(built.outDir, 'drydock-bridge.js'), 'slurm', '--help'], {
      env: plainEnv,
    });
    expect(bridge.stdout).toContain('drydock-bridge slurm --cluster NAME');
  });

  it('migrates an empty database with dist/drydock.js, from the migrations copied beside it', async () => {
    const url = await empty.create();
    const env = { ...plainEnv, DATABASE_URL: url };
    const shipped = readdirSync('db/migrations').filter((file) => file.endsWith('.sql')).length;
    // Before: the API from dist refuses the empty schema and names the command that fixes it.
    const refused = await runNode([join(built.outDir, 'api.js')], {
      ...env,
      TEMPORAL_ADDRESS: h.temporalAddress,
    });
    expect(refused.code).toBe(1);
    expect(refused.stdout + refused.stderr).toContain('drydock migrate');
    const first = await runNode([join(built.outDir, 'drydock.js'), 'migrate', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ total: shipped });
    expect((JSON.parse(first.stdout) as { applied: string[] }).applied).toHaveLength(shipped);
    const again = await runNode([join(built.outDir, 'drydock.js'), 'migrate', '--json'], env);
    expect(JSON.parse(again.stdout)).toEqual({ applied: [], total: shipped });
  });

  it(
    'serves the API from dist, its files beside it, and workers from dist drain nodes, untraced and traced',
    { timeout: 120_000 },
    async () => {
      const port = await freePort();
      await startDistApi(port);
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`http://127.0.0.1:${port}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${h.operatorKey}`, 'content-type': 'application/json' },
        });

      expect(await (await api('/healthz')).json()).toEqual({ status: 'ok' });
      // Files read at run time: the console's live script (dist/assets), the API reference's script.
      const signIn = await fetch(`http://127.0.0.1:${port}/console/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
        body: new URLSearchParams({ key: h.operatorKey }).toString(),
        redirect: 'manual',
      });
      expect(signIn.status).toBe(303);
      const session = signIn.headers.get('set-cookie')!.split(';')[0]!;
      const live = await fetch(`http://127.0.0.1:${port}/console/assets/live.js`, {
        headers: { cookie: session },
      });
      expect(live.status).toBe(200);
      expect(await live.text()).toBe(readFileSync('console/assets/live.js', 'utf8'));
      const docs = await (await api('/docs')).text();
      const referenceScript = /<script src="([^"]+)"/.exec(docs)?.[1];
      expect(referenceScript).toBeDefined();
      expect((await api(referenceScript!)).status).toBe(200);

      // A drain from start to end: the API and the worker both from dist, the worker's workflows
      // from the bundle the build made (no DRYDOCK_WORKFLOW_BUNDLE is passed).
      children.push(startWorkerProcess(h, { dist: built.outDir }));
      await seedPool(h, { id: 'pool-dist', tenantId: 'acme' });
      const nodeId = await seedNode(h, { poolId: 'pool-dist', tenantId: 'acme' });
      const allocation = await api('/v1/allocations', {
        method: 'POST',
        body: JSON.stringify({ nodeId, tenantId: 'acme', kind: 'job' }),
      });
      expect(allocation.status).toBe(201);
      const allocationId = ((await allocation.json()) as { id: string }).id;
      const started = await api(`/v1/nodes/${nodeId}/drain`, {
        method: 'POST',
        body: JSON.stringify({ reason: 'built' }),
      });
      expect(started.status).toBe(202);
      const opId = ((await started.json()) as { operation: { id: string } }).operation.id;
      // Waiting on the allocation, as the worker's workflow reports it.
      await eventually(async () => {
        const op = (await (await api(`/v1/operations/${opId}`)).json()) as { progress?: { phase?: string } };
        return op.progress?.phase === 'waiting';
      }, 60_000);
      expect((await api(`/v1/allocations/${allocationId}/release`, { method: 'POST' })).status).toBe(200);
      const done = await eventually(async () => {
        const op = (await (await api(`/v1/operations/${opId}`)).json()) as { status: string };
        return op.status === 'succeeded' ? op : undefined;
      }, 30_000);
      expect(done.status).toBe('succeeded');
      expect(await workflowResult(h, drainWorkflowId(nodeId), opId)).toBe('drained');
      const node = (await (await api(`/v1/nodes/${nodeId}`)).json()) as { noScheduleReasons: string[] };
      expect(node.noScheduleReasons).toEqual([]);

      // Traced, the worker from dist loads the bundle with the workflow interceptors: the
      // workflow's own span (made inside the sandbox) reaches the collector.
      await killWorker(children.pop()!);
      const collector = await startCollector();
      try {
        children.push(
          startWorkerProcess(h, {
            dist: built.outDir,
            env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${collector.url}/v1/traces` },
          }),
        );
        const idle = await seedNode(h, { poolId: 'pool-dist', tenantId: 'acme' });
        const drain = await api(`/v1/nodes/${idle}/drain`, {
          method: 'POST',
          body: JSON.stringify({ reason: 'traced' }),
        });
        expect(drain.status).toBe(202);
        const idleOpId = ((await drain.json()) as { operation: { id: string } }).operation.id;
        // Started by the traced worker's dispatcher once it is up (a fresh process: give it time).
        await eventually(async () => {
          const op = (await (await api(`/v1/operations/${idleOpId}`)).json()) as { status: string };
          return op.status === 'succeeded';
        }, 60_000);
        expect(await workflowResult(h, drainWorkflowId(idle), idleOpId)).toBe('drained');
        await eventually(async () => collector.spanNames.has('RunWorkflow:drain'), 30_000);
        expect(collector.spanNames).toContain('RunActivity:lookAtDrain');
      } finally {
        collector.server.close();
      }
    },
  );
});

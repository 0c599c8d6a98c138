import { readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listen } from '../../api/server';
import { ensureLivenessSweep } from '../../workflows/liveness-client';
import { freePort } from '../../scripts/services/process';
import { heartbeat, operationWhen } from '../support/builders';
import { executeFromPreview, retiredNode } from '../support/decommission';
import { joinedNode } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { scrape, valueOf, type Sample } from '../support/scrape';
import { killWorker, startWorkerProcess } from '../support/worker-process';

// The worker is its own process, as in production: its /metrics carries the Temporal SDK's too.
const h = useHarness({ worker: false });
let api: { server: Server; url: string };
let worker: { child: ChildProcess; url: string };

beforeAll(async () => {
  // The namespace's liveness controller, parked on a queue nobody polls (as the crash tests do):
  // whatever the order of the files, this worker never sweeps, so the test sees only its own traffic.
  await ensureLivenessSweep(h.temporal, 'liveness-controller-parked');
  const listening = await listen(h.deps, 0);
  api = { server: listening.server, url: `http://127.0.0.1:${listening.port}` };
  const port = await freePort();
  worker = { child: startWorkerProcess(h, { metricsPort: port }), url: `http://127.0.0.1:${port}` };
  // Ready (its /readyz) once it polls its task queue.
  await eventually(async () => (await fetch(`${worker.url}/readyz`).catch(() => undefined))?.ok, 60_000, 200);
});

afterAll(async () => {
  if (worker) await killWorker(worker.child);
  if (api) await closeServer(api.server);
});

/** The metric names a PromQL expression reads (Drydock's, the Temporal SDK's and the process's). */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\b(?:drydock|temporal|process|nodejs)_[a-z0-9_]+/g)].map((m) => m[0]);
}

const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as {
  schemaVersion: number;
  panels: { title: string; targets: { expr: string }[] }[];
};

describe('metrics, as Prometheus scrapes them', () => {
  it("names the worker process that answered the worker's /readyz", async () => {
    const ready = await fetch(`${worker.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', process: worker.child.pid });
  });

  it('serves every metric the Grafana dashboard names, from the API and the worker, after a little traffic', async () => {
    // One request, one heartbeat (flushed), one pool drain through to drained (local activities)
    // and one decommission (regular activities), so the SDK's metrics of both appear.
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    await seedPool(h, { id: 'pool-m', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-m');
    expect((await heartbeat(h, credential)).status).toBe(200);
    await h.deps.heartbeats.flush();
    const drain = await call(h, 'POST', '/v1/pools/pool-m/drain', { body: { reason: 'metrics' } });
    expect(drain.status).toBe(202);
    await eventually(async () => (await eventsOf(h, nodeId, 'node.drained')).length > 0, 30_000);
    // The API's figures before the decommission's node joins and beats.
    const fromApi = await scrape(`${api.url}/metrics`);
    const retired = await retiredNode(h, 'pool-m');
    const { reply: decommission } = await executeFromPreview(h, retired.nodeId);
    expect(decommission.status).toBe(202);
    await operationWhen(h, decommission.body.id, (op) => op.status === 'succeeded', 30_000);

    const fromWorker = await eventually(async () => {
      const samples = await scrape(`${worker.url}/metrics`);
      return valueOf(samples, 'drydock_drain_wait_seconds_count') === 1 ? samples : undefined;
    });
    const served = new Set([...fromApi, ...fromWorker].map((s: Sample) => s.name));

    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const named = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => metricNames(t.expr))));
    expect(named.size).toBeGreaterThan(15);
    expect(
      [...named].filter((name) => !served.has(name)),
      'named by the dashboard, not served',
    ).toEqual([]);

    // What the traffic left, as a user reads it.
    expect(valueOf(fromApi, 'drydock_http_request_duration_seconds_count', { route: '/healthz' })).toBe(1);
    expect(valueOf(fromApi, 'drydock_heartbeats_total')).toBe(1);
    expect(valueOf(fromApi, 'drydock_heartbeat_flush_nodes_sum')).toBe(1);
    expect(valueOf(fromWorker, 'drydock_operations_running', { kind: 'drain' })).toBe(0);
    expect(valueOf(fromWorker, 'drydock_nodes', { liveness: 'alive' })).toBe(1);
    expect(valueOf(fromWorker, 'temporal_worker_task_slots_available')).toBeGreaterThan(0);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { TelemetryOptions } from '@temporalio/worker';
import { METRICS_CONTENT_TYPE } from './metrics';

/** How long a scrape waits for the Temporal SDK's own exporter before answering without it. */
const CORE_SCRAPE_TIMEOUT_MS = 2_000;

/**
 * The Temporal SDK's core (Rust) serves its worker metrics — task slots, poll and schedule-to-start
 * latencies, sticky cache — as Prometheus text on a port of its own; the worker's /metrics appends
 * that text to its own, so one scrape target has both. Names follow Prometheus conventions
 * (`_total` counters, `_seconds` histograms) like Drydock's.
 */
export function coreMetricsTelemetry(corePort: number): TelemetryOptions {
  return {
    metrics: {
      prometheus: {
        bindAddress: `127.0.0.1:${corePort}`,
        countersTotalSuffix: true,
        unitSuffix: true,
        useSecondsForDurations: true,
      },
    },
  };
}

/**
 * The worker's `/metrics` on `port` (0: one the kernel picks): `registry` followed by the text of
 * core's exporter at `corePort`, when given. Beside it `/readyz`: `200` once `ready()` says the
 * worker polls its task queue, `503` before (an orchestrator's readiness check). Resolves with the
 * port once it listens.
 */
export async function serveWorkerMetrics(
  registry: Registry,
  options: { port: number; corePort?: number; ready: () => boolean },
): Promise<{ server: Server; port: number }> {
  const server = createServer((request, response) => {
    const path = request.url?.split('?')[0];
    if (request.method === 'GET' && path === '/readyz') {
      const ready = options.ready();
      response
        .writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
        .end(`${JSON.stringify({ status: ready ? 'ready' : 'starting', process: process.pid })}\n`);
      return;
    }
    if (request.method !== 'GET' || path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain' })
        .end('not found: the worker serves GET /metrics and GET /readyz\n');
      return;
    }
    Promise.all([registry.metrics(), options.corePort ? coreText(options.corePort) : ''])
      .then(([own, core]) =>
        response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(own + core),
      )
      .catch((error: unknown) =>
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`${(error as Error).message}\n`),
      );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '0.0.0.0', () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/** Core's Prometheus text; empty when it does not answer (the worker's own metrics still go out). */
async function coreText(port: number): Promise<string> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
      signal: AbortSignal.timeout(CORE_SCRAPE_TIMEOUT_MS),
    });
    return response.ok ? await response.text() : '';
  } catch {
    return '';
  }
}

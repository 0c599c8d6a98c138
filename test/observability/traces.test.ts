import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, tracesEndpointOf, type Tracing } from '../../observability/tracing';
import { seedPoolNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

/** One span as OTLP/HTTP JSON carries it (ids in hex), with the service that sent it. */
interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
}

const SERVER_KIND = 2;

/** A collector the way Jaeger or otel-collector listens on :4318: POST /v1/traces, OTLP JSON. */
function startCollector(): Promise<{ server: Server; url: string; spans: CollectedSpan[] }> {
  const spans: CollectedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = resourceSpans.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value
          ?.stringValue;
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) spans.push({ ...span, service });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans }),
    ),
  );
}

// First, before anything in this process starts a provider: the global one is still the no-op.
describe('tracing without an endpoint', () => {
  it('creates no provider and no exporter, and registers nothing', () => {
    expect(tracesEndpointOf({})).toBeUndefined();
    expect(startTracing({ service: 'drydock-api', endpoint: undefined })).toBeNull();
    expect(trace.getTracer('drydock-test').startSpan('probe').isRecording()).toBe(false);
  });

  it('reads the endpoints as the OpenTelemetry specification does', () => {
    expect(tracesEndpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(tracesEndpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' })).toBe(
      'http://collector:4318/otlp/v1/traces',
    );
    // The signal's own endpoint is the whole URL, and wins over the base.
    expect(
      tracesEndpointOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/custom',
      }),
    ).toBe('http://tempo:4318/custom');
  });
});

describe('tracing to an OTLP/HTTP collector', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let tracing: Tracing;
  beforeAll(async () => {
    collector = await startCollector();
    tracing = startTracing({
      service: 'drydock-api',
      endpoint: tracesEndpointOf({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url }),
    })!;
  });
  const h = useHarness({ tracing: () => tracing });
  afterAll(async () => {
    await tracing?.shutdown();
    await new Promise((resolve) => collector?.server.close(resolve));
  });

  it('follows a drain request in one trace: HTTP span, the outbox start, the workflow and its activities', async () => {
    const nodeId = await seedPoolNode(h, 'pool-a');
    // A traced caller: its span is the request's parent.
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` },
    });
    expect(started.status).toBe(202);
    await eventually(async () => (await eventsOf(h, nodeId, 'node.drained')).length > 0);

    // The workflow's spans leave the sandbox when they end; the batch goes out on a flush.
    const spans = await eventually(async () => {
      await tracing.provider.forceFlush();
      const ours = collector.spans.filter((s) => s.traceId === traceId);
      const names = ours.map((s) => s.name);
      const complete = ['RunWorkflow:drain', 'RunActivity:lookAtDrain'].every((n) => names.includes(n));
      return complete ? ours : undefined;
    }, 20_000);
    const named = (name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };

    const server = named('POST /v1/nodes/:id/drain');
    expect(server).toMatchObject({ kind: SERVER_KIND, parentSpanId: callerSpanId, service: 'drydock-api' });
    // The request committed the start to the outbox with its trace; the dispatcher's start
    // continues it, and the run hangs from the start.
    const start = named('StartWorkflow:drain');
    expect(start.parentSpanId).toBe(server.spanId);
    expect(named('RunWorkflow:drain').parentSpanId).toBe(start.spanId);
    const scheduled = named('StartActivity:lookAtDrain');
    expect(named('RunActivity:lookAtDrain').parentSpanId).toBe(scheduled.spanId);

    // One tree: every span but the request's hangs from another span of the same trace.
    const ids = new Set(spans.map((s) => s.spanId));
    expect(ids.size).toBe(spans.length);
    for (const span of spans.filter((s) => s !== server)) {
      expect(ids.has(span.parentSpanId ?? ''), `${span.name}'s parent`).toBe(true);
    }
  });
});

import { createRequire } from 'node:module';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { Config } from '../config';

/** The services Drydock's spans come from (`service.name`). */
export type TracedService = 'drydock-api' | 'drydock-worker';

/** A process's running trace pipeline: spans batch up and go to one OTLP/HTTP collector. */
export interface Tracing {
  provider: NodeTracerProvider;
  /** Where the worker's sink hands the spans its workflows end (they are made in the sandbox). */
  processor: SpanProcessor;
  resource: Resource;
  /** Sends the spans still batched, then stops; spans ended after it are dropped. */
  shutdown(): Promise<void>;
}

/**
 * The OTLP/HTTP traces URL the configuration names, read the way the OpenTelemetry specification
 * reads its variables: the traces endpoint is used as given, the general endpoint is a base that
 * `v1/traces` is appended to. Neither set: undefined, and tracing is off.
 */
export function tracesEndpointOf(
  config: Pick<Config, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'>,
): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

/**
 * Starts tracing for `service` when `endpoint` is set: a provider registered as the process's
 * global one (the Hono middleware and the Temporal interceptors find it there), W3C trace-context
 * propagation and an async-hooks context. No endpoint: null, and nothing is created or registered,
 * so an untraced process pays nothing.
 */
export function startTracing(options: {
  service: TracedService;
  endpoint: string | undefined;
}): Tracing | null {
  if (!options.endpoint) return null;
  const resource = new Resource({ 'service.name': options.service });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: options.endpoint }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // The default propagator is W3C trace context (and baggage): `traceparent` in, `traceparent` out.
  provider.register();
  return { provider, processor, resource, shutdown: () => provider.shutdown() };
}

/**
 * The Temporal client interceptor that makes every workflow start, update-with-start, signal and
 * query a span of the caller's trace, its context carried to the workflow in the Temporal headers.
 */
export function workflowClientTracing(tracing: Tracing | null): OpenTelemetryWorkflowClientInterceptor[] {
  return tracing ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

/** The workflow-side interceptors (bundled into the sandbox): a span per run, update, signal and activity start. */
export function workflowTracingModules(traced: boolean): string[] {
  return traced
    ? [
        createRequire(import.meta.url).resolve(
          '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
        ),
      ]
    : [];
}

/** A span per activity execution, child of the workflow span that scheduled it. */
export function activityTracing(tracing: Tracing | null): ActivityInterceptorsFactory[] {
  return tracing ? [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx) })] : [];
}

/** The sink the sandbox's workflow spans leave through, into this process's batch. */
export function workflowSpanSinks(tracing: Tracing | null): NonNullable<WorkerOptions['sinks']> {
  return tracing ? { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) } : {};
}

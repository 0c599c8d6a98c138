import { httpInstrumentationMiddleware } from '@hono/otel';
import { OpenAPIHono } from '@hono/zod-openapi';
import { routePath } from 'hono/route';
import { DrydockError } from '../domain/errors';
import { currentLogScope, inLogScope } from '../observability/request-id';
import { logAccess } from './access-log';
import { authenticate, requireMetricsToken } from './auth';
import { lingerAfterRefusal, limitBody } from './body-limit';
import { docsRoutes } from './docs-page';
import type { AppDeps, AppEnv } from './env';
import { toResponse } from './errors';
import { openApiDocumentOf, registerSharedComponents } from './openapi';
import { METRICS_CONTENT_TYPE } from '../observability/metrics';
import { keysRoutes } from './routes/keys';
import { eventsRoutes } from './routes/events';
import { auditRoutes } from './routes/audit';
import { nodesRoutes } from './routes/nodes';
import { operationsRoutes } from './routes/operations';
import { agentRoutes } from './routes/agent';
import { agentInventoryRoutes } from './routes/agent-inventory';
import { agentCredentialRoutes } from './routes/agent-credentials';
import { allocationsRoutes } from './routes/allocations';
import { allocationsReadRoutes } from './routes/allocations-read';
import { artifactsRoutes } from './routes/artifacts';
import { nodeAccessRoutes } from './routes/node-access';
import { nodeControlsRoutes } from './routes/node-controls';
import { decommissionRoutes } from './routes/decommission';
import { drainRoutes } from './routes/drain';
import { purgeRoutes } from './routes/purge';
import { remediationRoutes } from './routes/remediation';
import { commandRoutes } from './routes/commands';
import { sshCertificateRoutes } from './routes/ssh-certificates';
import { agentSshRoutes } from './routes/agent-ssh';
import { maintenanceRoutes } from './routes/maintenance';
import { conditionsRoutes } from './routes/conditions';
import { schedulerViewsRoutes } from './routes/scheduler-views';
import { poolDrainRoutes } from './routes/pool-drain';
import { poolsRoutes } from './routes/pools';
import { tokensRoutes } from './routes/tokens';
import { whoamiRoutes } from './routes/whoami';
import { consoleRoutes } from '../console/app';
import { consoleSessionStore } from '../db/console-sessions';
import { outboxBacklog } from '../db/queries/outbox';
import { limitFailedAuthentications } from './rate-limit';
import { refuseAmbiguousPath, refuseUndecodableQuery } from './request-path';
import { newRequestId } from './request-id';
import { refuseInvalid } from './schemas';

/** The routers of the /v1 resources, in the order they are matched; each call builds a fresh one. */
const ROUTES = [
  nodesRoutes,
  eventsRoutes,
  auditRoutes,
  nodeControlsRoutes,
  drainRoutes,
  decommissionRoutes,
  purgeRoutes,
  remediationRoutes,
  commandRoutes,
  sshCertificateRoutes,
  maintenanceRoutes,
  conditionsRoutes,
  schedulerViewsRoutes,
  operationsRoutes,
  allocationsRoutes,
  allocationsReadRoutes,
  artifactsRoutes,
  poolsRoutes,
  poolDrainRoutes,
  keysRoutes,
  tokensRoutes,
  nodeAccessRoutes,
  agentRoutes,
  agentInventoryRoutes,
  agentCredentialRoutes,
  agentSshRoutes,
  whoamiRoutes,
] as const;

/** The Drydock HTTP API, wired to the services in `deps`. */
export function createApp(deps: AppDeps) {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: refuseInvalid });

  // First, so the request's span holds all of its work (a traced client's `traceparent` is its parent).
  if (deps.tracerProvider) {
    app.use(
      '*',
      httpInstrumentationMiddleware({ tracerProvider: deps.tracerProvider, captureActiveRequests: false }),
    );
  }
  // Nothing here throws before next(): a refusal from a later middleware is already a response
  // when this one resumes, so every answer (404s and body refusals included) gets its request id
  // (set before the answer is made, so every answer made through the context carries it) and its
  // access-log line. A console page's in-process calls to the API are part of the page's request:
  // they keep its id, and the page's line stands for them (their errors are logged). The
  // failed-authentication limit is applied here too, once the answer is known.
  app.use('*', async (c, next) => {
    const page = currentLogScope();
    c.set('requestId', page?.requestId ?? newRequestId());
    c.set('deps', deps);
    c.header('X-Request-Id', c.get('requestId'));
    const started = performance.now();
    await inLogScope({ requestId: c.get('requestId') }, next);
    await limitFailedAuthentications(c);
    if (c.error instanceof DrydockError && c.error.code === 'PAYLOAD_TOO_LARGE') await lingerAfterRefusal(c);
    const route = routePath(c);
    deps.metrics.request(c.req.method, route, c.res.status, started);
    if (!page) logAccess(deps.log, c, route, started);
  });
  // A path that could mean another one is refused before anything else reads it.
  app.use('*', refuseAmbiguousPath);
  app.use('*', refuseUndecodableQuery);
  // The body's limit, then the body read once, as UTF-8.
  app.use('*', limitBody);
  app.onError(toResponse);
  app.notFound((c) => toResponse(new DrydockError('NOT_FOUND', `no route ${c.req.method} ${c.req.path}`), c));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    // Ready with Postgres alone: requests are recorded whether or not Temporal or a worker is up.
    // `outbox`: what waits for a worker's dispatcher to tell Temporal (db/outbox.ts).
    const outbox = await outboxBacklog(deps.db).catch(() => null);
    // `process`: which API process answered, when several share the port (API_PROCESSES).
    return c.json(
      { status: outbox ? 'ready' : 'unavailable', postgres: outbox !== null, outbox, process: process.pid },
      outbox ? 200 : 503,
    );
  });
  app.get('/metrics', async (c) => {
    requireMetricsToken(deps, c.req.header('authorization'));
    return c.text(await deps.metrics.render(), 200, { 'content-type': METRICS_CONTENT_TYPE });
  });

  registerSharedComponents(app);
  // Built once, on the first request: by then every route below is registered.
  let document: ReturnType<typeof openApiDocumentOf> | undefined;
  app.get('/openapi.json', (c) => c.json((document ??= openApiDocumentOf(app))));
  app.route('/', docsRoutes());

  // Joining is the one /v1 call without a bearer credential: the join token is in the body.
  app.use('/v1/*', (c, next) => (c.req.path === '/v1/agent/join' ? next() : authenticate(c, next)));
  for (const routes of ROUTES) app.route('/', routes());
  // The admin console (docs/console.md) calls the routes above in-process, as the signed-in key.
  app.route(
    '/console',
    consoleRoutes(
      (request, env) => app.fetch(request, env),
      consoleSessionStore(deps.db),
      deps.consoleSignIn,
    ),
  );
  return app;
}

export type App = ReturnType<typeof createApp>;

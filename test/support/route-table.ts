import { newId } from '../../domain/ids';
import { ACTIONS, type Action } from '../../domain/principal';
import { count, eq, inArray } from 'drizzle-orm';
import { allocations, nodeCommands, nodes, operations, workflowOutbox } from '../../db/schema';
import { createToken, join, newPublicKey } from './agents';
import { preview, retiredNode } from './decommission';
import { call, seedPool, tenantKey, type Reply } from './fixtures';
import { eventually, type Harness } from './harness';
import { REFERENCE_SCRIPT_PATH } from '../../api/docs-page';

/** The JSON Schema of one request part, as the OpenAPI document gives it. */
export interface JsonSchema {
  type?: string;
  pattern?: string;
  maxLength?: number;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  anyOf?: JsonSchema[];
  enum?: unknown[];
  [key: string]: unknown;
}

export interface ParamSpec {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

/** One route of the app as its OpenAPI registry describes it. */
export interface RouteSpec {
  /** `METHOD /path/{param}`, the key of EXEMPLARS. */
  key: string;
  method: string;
  path: string;
  params: ParamSpec[];
  query: ParamSpec[];
  headers: ParamSpec[];
  body?: { schema: JsonSchema; required: boolean };
}

interface Operation {
  parameters?: { name: string; in: string; required?: boolean; schema: JsonSchema }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
}

type App = Harness['app'];

/**
 * Every route registered with the app's OpenAPI registry, with the JSON Schemas of its params,
 * query, headers and body as the document generated from that registry shows them.
 */
export function routeSpecs(app: App): RouteSpec[] {
  const doc = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 'routes', version: '0' } });
  const specs: RouteSpec[] = [];
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue;
    const { method, path } = definition.route;
    const operation = (doc.paths?.[path] as Record<string, Operation>)[method]!;
    const parameters = (where: string) =>
      (operation.parameters ?? [])
        .filter((p) => p.in === where)
        .map((p) => ({ name: p.name, required: p.required ?? false, schema: p.schema }));
    const body = operation.requestBody?.content['application/json'];
    specs.push({
      key: `${method.toUpperCase()} ${path}`,
      method: method.toUpperCase(),
      path,
      params: parameters('path'),
      query: parameters('query'),
      headers: parameters('header'),
      body: body ? { schema: body.schema, required: operation.requestBody!.required ?? false } : undefined,
    });
  }
  return specs;
}

/** Routes served beside the OpenAPI ones (probes, metrics, the document itself). */
export const PLAIN_ROUTES: RouteSpec[] = [
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/docs',
  REFERENCE_SCRIPT_PATH,
].map((path) => ({ key: `GET ${path}`, method: 'GET', path, params: [], query: [], headers: [] }));

/**
 * Every method and path Hono serves, in the `{param}` form of the OpenAPI document. The console's
 * pages (/console, signed in by cookie, not bearer) are not API routes: test/console covers them.
 */
export function servedRoutes(app: App): string[] {
  return app.routes
    .filter((r) => r.method !== 'ALL' && r.path !== '/console' && !r.path.startsWith('/console/'))
    .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
}

/**
 * What a tenant key of a tenant granted the owner's pool gets, holding every action: a grant lets
 * it read the pool's nodes and place its own work there, nothing of the owner's beyond that.
 * `forbidden`: 403 (it sees the object, operating it is the owner's); `hidden`: 404 as if missing;
 * `filtered`: a listing without the owner's objects; `allowed`: the owner's answer.
 */
export type GranteeAnswer = 'allowed' | 'filtered' | 'hidden' | 'forbidden';

/** Who may call a route. */
export type Access =
  | { kind: 'public' }
  | { kind: 'operator' }
  | { kind: 'tenant'; action: Action; grantee: GranteeAnswer }
  /** A node credential; `pending`: a node waiting for approval may call it too. */
  | { kind: 'agent'; pending: boolean };

export interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface Exemplar {
  access: Access;
  /** What the right caller gets for `build`'s call. */
  status: number;
  /** A valid call on objects of the owner tenant made for it (each call its own where it changes them). */
  build(world: World): Promise<Call>;
  /**
   * Tenant routes that name an owner's object: how a stranger names it (default: the same call)
   * and how a call names a missing one (default: a missing id in the path). Routes without it are
   * listings, which answer a stranger without any of the owner's objects.
   */
  named?: { stranger?(call: Call, world: World): Call; missing?(call: Call): Call };
}

/** The tenants, keys, nodes and credentials the exemplars run against. */
export interface World {
  h: Harness;
  owner: string;
  stranger: string;
  /** The owner's pool: every node the exemplars make lives here. */
  pool: string;
  /** A tenant key of the stranger holding every action. */
  strangerKey: string;
  /** The tenant granted the owner's pool, and a key of it holding every action. */
  grantee: string;
  granteeKey: string;
  /** An owner key holding every action. */
  ownerKey: string;
  /** A revoked key of the owner that held every action. */
  revokedKey: string;
  /** An owner key holding only `action`. */
  keyWith(action: Action): Promise<string>;
  /** An owner key holding every action but `action`. */
  keyWithout(action: Action): Promise<string>;
  /** An adopted node that joined with a token, and its credential. */
  agent: { nodeId: string; credential: string };
  /** A node that joined without a token and waits for approval, and its credential. */
  pending: { nodeId: string; credential: string };
  /** A join token of the owner's pool without a use limit. */
  token: string;
  /** Ids of the owner's objects: no stranger's answer may name one. */
  ownerIds: Set<string>;
  /** A fresh node of the owner's pool, version 1, written straight into the database. */
  node(options?: {
    provisionState?: 'adopted' | 'adopting' | 'pending';
    condition?: string;
  }): Promise<string>;
  /** An operation of the owner's (a drain of a fresh node), made once. */
  operation(): Promise<string>;
}

export async function createWorld(h: Harness): Promise<World> {
  const suffix = Math.random().toString(36).slice(2, 8);
  const owner = `own-${suffix}`;
  const stranger = `str-${suffix}`;
  const grantee = `gra-${suffix}`;
  const pool = `pool-${owner}`;
  // Short remediation attempts: a remediation a request starts ends (escalated) within seconds.
  await seedPool(h, {
    id: pool,
    tenantId: owner,
    grants: [grantee],
    policy: { remediation: { GpuXidError: { attemptTimeout: '300ms' } } },
  });
  await seedPool(h, { id: `pool-${stranger}`, tenantId: stranger });
  const ownerIds = new Set<string>([pool]);
  const strangerKey = (await tenantKey(h, stranger, [...ACTIONS], `all-${stranger}`)).secret;
  const granteeKey = (await tenantKey(h, grantee, [...ACTIONS], `all-${grantee}`)).secret;
  const ownerKey = (await tenantKey(h, owner, [...ACTIONS], `all-${owner}`)).secret;
  const revoked = await tenantKey(h, owner, [...ACTIONS], `revoked-${owner}`);
  await must(call(h, 'DELETE', `/v1/keys/${revoked.id}`), 200);
  const keys = new Map<string, Promise<string>>();
  const cachedKey = (name: string, actions: Action[]) => {
    if (!keys.has(name))
      keys.set(
        name,
        tenantKey(h, owner, actions, name).then((k) => k.secret),
      );
    return keys.get(name)!;
  };
  const token = await createToken(h, { poolId: pool, maxUses: 0 });
  ownerIds.add(token.id);
  const agent = await joined(h, token.secret);
  const pending = await joined(h, undefined);
  ownerIds.add(agent.nodeId);
  let operation: Promise<string> | undefined;

  const world: World = {
    h,
    owner,
    stranger,
    pool,
    strangerKey,
    grantee,
    granteeKey,
    ownerKey,
    revokedKey: revoked.secret,
    keyWith: (action) => cachedKey(`only-${action.replaceAll(':', '.')}`, [action]),
    keyWithout: (action) =>
      cachedKey(
        `all-but-${action.replaceAll(':', '.')}`,
        ACTIONS.filter((a) => a !== action),
      ),
    agent,
    pending,
    token: token.secret,
    ownerIds,
    async node(options = {}) {
      const id = newId('node');
      const pendingNode = options.provisionState === 'pending';
      await h.db.insert(nodes).values({
        id,
        poolId: pendingNode ? null : pool,
        tenantId: pendingNode ? null : owner,
        siteId: 'fra1',
        hostname: `host-${id.slice(-8)}`,
        provisionState: options.provisionState ?? 'adopted',
        connectivity: 'connected',
        ...(options.condition
          ? {
              conditions: [
                { type: options.condition, status: true, reason: 'xid-79', since: new Date().toISOString() },
              ],
              noScheduleReasons: [`condition:${options.condition}`],
            }
          : {}),
      });
      ownerIds.add(id);
      return id;
    },
    operation() {
      operation ??= world.node().then(async (nodeId) => {
        const reply = await must(call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: {} }), 202);
        ownerIds.add(reply.body.operation.id);
        return reply.body.operation.id as string;
      });
      return operation;
    },
  };
  return world;
}

async function joined(h: Harness, token: string | undefined) {
  const reply = await must(join(h, token ? { token } : {}), 201);
  return { nodeId: reply.body.nodeId as string, credential: reply.body.credential as string };
}

async function must(reply: Promise<Reply>, status: number): Promise<Reply> {
  const answer = await reply;
  if (answer.status !== status) throw new Error(`expected ${status}: ${JSON.stringify(answer.body)}`);
  return answer;
}

const fresh = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
const REASON = 'exemplar: every field filled';
/** The fields of a plain node mutation, on a fresh node (version 1). */
const mutation = { reason: REASON, version: 1 };
const ifMatch = { 'if-match': '"1"' };

/** A pool's grants and every policy field, as a created pool and a pool patch take them. */
const EVERY_POOL_SETTING = {
  grants: ['partner'],
  policy: {
    lostAfter: '10m',
    maxUnavailable: 2,
    maxUnhealthy: '40%',
    remediation: {
      GpuXidError: { ladder: ['reset-accelerator', 'reboot'], attemptTimeout: '10m', healthyAfter: '60s' },
    },
  },
};

/** A tenant route: a grantee may read (`compute:nodes:read`) and is refused the rest unless said. */
const tenant = (action: Action, grantee?: GranteeAnswer): Access => ({
  kind: 'tenant',
  action,
  grantee: grantee ?? (action === 'compute:nodes:read' ? 'allowed' : 'forbidden'),
});
const OPERATOR: Access = { kind: 'operator' };
const PUBLIC: Access = { kind: 'public' };
const AGENT: Access = { kind: 'agent', pending: false };
const NAMED = {};

/** A control of a fresh node with the full mutation body and If-Match. */
const control = (action: Action, body: Record<string, unknown> = {}): Exemplar => ({
  access: tenant(action),
  status: 200,
  build: async (w) => ({ params: { id: await w.node() }, headers: ifMatch, body: { ...body, ...mutation } }),
  named: NAMED,
});

/** An operator's decision on a fresh pending node. */
const pendingControl = (body: (w: World) => Promise<Record<string, unknown>>): Exemplar => ({
  access: OPERATOR,
  status: 200,
  build: async (w) => ({
    params: { id: await w.node({ provisionState: 'pending' }) },
    headers: ifMatch,
    body: { ...(await body(w)), ...mutation },
  }),
});

const read = (build: Exemplar['build'], named = true): Exemplar => ({
  access: tenant('compute:nodes:read'),
  status: 200,
  build,
  ...(named ? { named: NAMED } : {}),
});

/** A live allocation of the owner's on `nodeId`, placed through the API. */
async function placed(w: World, nodeId: string): Promise<string> {
  const reply = await must(
    call(w.h, 'POST', '/v1/allocations', { body: { nodeId, tenantId: w.owner, kind: 'job' } }),
    201,
  );
  w.ownerIds.add(reply.body.id);
  return reply.body.id as string;
}

/**
 * A live allocation of the owner's a scheduler placed on a fresh node, recorded through the API,
 * whose end a drain's deadline asked for (set in the database: no drain runs for it).
 */
async function endRequested(w: World): Promise<string> {
  const reply = await must(
    call(w.h, 'POST', '/v1/allocations', {
      body: {
        nodeId: await w.node(),
        tenantId: w.owner,
        kind: 'job',
        source: 'slurm:hpc1',
        externalId: fresh('job'),
      },
    }),
    201,
  );
  const id = reply.body.id as string;
  w.ownerIds.add(id);
  await w.h.db.update(allocations).set({ endRequestedAt: new Date() }).where(eq(allocations.id, id));
  return id;
}

/** A fresh node of the owner's with a copy of a fresh artifact recorded on it, through the API. */
async function copied(w: World): Promise<{ nodeId: string; artifactId: string }> {
  const nodeId = await w.node();
  const artifactId = fresh('weights');
  await must(
    call(w.h, 'PUT', `/v1/nodes/${nodeId}/artifact-copies/${artifactId}`, { body: { path: '/data/w' } }),
    201,
  );
  return { nodeId, artifactId };
}

async function command(w: World, status: 'pending' | 'acked' = 'pending'): Promise<string> {
  const id = newId('cmd');
  await w.h.db
    .insert(nodeCommands)
    .values({ id, nodeId: w.agent.nodeId, kind: 'remediate', action: 'reboot', status });
  return id;
}

/** A rolling maintenance of a pool of its own, paused at its maxFailures (no workflow runs it). */
async function pausedRollingMaintenance(w: World): Promise<string> {
  const poolId = fresh('pool-paused');
  await seedPool(w.h, { id: poolId, tenantId: w.owner });
  const id = newId('op');
  const counts = { pending: 1, running: 0, succeeded: 0, failed: 1, cancelled: 0 };
  await w.h.db.insert(operations).values({
    id,
    kind: 'pool-maintenance',
    poolId,
    status: 'running',
    phase: 'paused',
    workflowId: `pool-maintenance/${poolId}`,
    actor: 'key:exemplar',
    reason: REASON,
    startedAt: new Date(),
    result: {
      selector: '',
      plan: { steps: [{ kind: 'reboot' }] },
      maxConcurrent: 1,
      maxFailures: 1,
      nodeIds: [],
      failedAtResume: 0,
      refused: [],
    },
    waitingFor: {
      counts,
      atStep: [0],
      doneStep: [0],
      steps: ['reboot'],
      nodes: [],
      maxConcurrent: 1,
      maxFailures: 1,
      failuresSinceResume: 1,
      paused: true,
    },
  });
  return id;
}

/** An OpenSSH public key line, as `~/.ssh/id_ed25519.pub` holds one. */
const SSH_PUBLIC_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEwaRIkOs6iCAP+LcJubwzS0EOGWp1uDGmDG2+l8iElE alice@laptop';

/** A break-glass SSH certificate of `nodeId`, issued by the operator; its serial. */
async function sshCertificate(w: World, nodeId: string): Promise<string> {
  const reply = await must(
    call(w.h, 'POST', `/v1/nodes/${nodeId}/ssh-certificates`, {
      body: { publicKey: SSH_PUBLIC_KEY, reason: REASON },
    }),
    201,
  );
  return String(reply.body.serial);
}

/** A `run` command of `nodeId`, as `POST /v1/nodes/{id}/commands` queues one. */
async function runCommand(
  w: World,
  nodeId: string,
  status: 'pending' | 'running' = 'pending',
): Promise<string> {
  const id = newId('cmd');
  await w.h.db.insert(nodeCommands).values({
    id,
    nodeId,
    kind: 'run',
    action: 'diagnostics',
    args: {},
    status,
    reason: REASON,
    requestedBy: 'key:exemplar',
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  return id;
}

/**
 * A valid call per route, with every optional field filled so that each field can be spoiled in
 * turn. The tests fail for a route without an exemplar and for an exemplar without a route.
 */
export const EXEMPLARS: Record<string, Exemplar> = {
  'GET /v1/nodes': read(
    async (w) => ({
      query: {
        id: await w.node(),
        tenantId: w.owner,
        poolId: w.pool,
        siteId: 'fra1',
        cordoned: 'false',
        provisionState: 'adopted',
        access: 'allowed',
        liveness: 'alive',
        selector: 'rack=b7',
        hostname: 'gpu',
        includeDeleted: 'false',
        sort: '-hostname',
        limit: '10',
      },
    }),
    false,
  ),
  'GET /v1/node-summary': read(
    async (w) => ({
      query: {
        tenantId: w.owner,
        poolId: w.pool,
        siteId: 'fra1',
        cordoned: 'false',
        maintenance: 'false',
        provisionState: 'adopted',
        access: 'allowed',
        liveness: 'alive',
        selector: 'rack=b7',
        hostname: 'gpu',
        groupBy: 'gpu.model',
      },
    }),
    false,
  ),
  'GET /v1/nodes/{id}': read(async (w) => ({ params: { id: await w.node() } })),
  'GET /v1/nodes/{id}/events': read(async (w) => ({
    params: { id: await w.node() },
    query: { type: 'node.', order: 'newest', limit: '20' },
  })),
  // wait 0: the fuzzer spoils only values the schema refuses, so no call of it long-polls.
  'GET /v1/events': read(
    async () => ({ query: { after: '0', type: 'node.', limit: '20', wait: '0' } }),
    false,
  ),
  'GET /v1/audit': {
    access: OPERATOR,
    status: 200,
    build: async () => ({
      query: {
        actor: 'alice@example.com',
        type: 'node.',
        since: '2026-01-01T00:00:00Z',
        until: '2027-01-01T00:00:00+02:00',
        cursor: '999',
        limit: '20',
      },
    }),
  },
  'POST /v1/nodes/{id}/cordon': control('compute:nodes:cordon'),
  'POST /v1/nodes/{id}/uncordon': control('compute:nodes:cordon'),
  'POST /v1/nodes/{id}/taint': control('compute:nodes:update', { add: ['rma-pending'], remove: ['old'] }),
  'POST /v1/nodes/{id}/label': control('compute:nodes:update', { set: { rack: 'b7' }, remove: ['old'] }),
  'POST /v1/nodes/{id}/maintenance': control('compute:nodes:update', { maintenance: false }),
  'POST /v1/nodes/{id}/adopt': control('compute:nodes:provision'),
  'DELETE /v1/nodes/{id}': {
    access: tenant('compute:nodes:delete'),
    status: 200,
    build: async (w) => ({
      params: { id: await w.node({ provisionState: 'adopting' }) },
      headers: ifMatch,
      body: mutation,
    }),
    named: NAMED,
  },
  'POST /v1/nodes/{id}/drain': {
    access: tenant('compute:nodes:drain'),
    status: 202,
    build: async (w) => ({
      params: { id: await w.node() },
      headers: { ...ifMatch, 'idempotency-key': fresh('drain-key') },
      body: mutation,
    }),
    named: NAMED,
  },
  'POST /v1/pools/{id}/maintenance': {
    access: tenant('compute:nodes:command'),
    status: 202,
    build: async (w) => {
      // A pool of its own each time: a pool has one rolling maintenance at a time.
      const id = fresh('pool-mnt');
      await seedPool(w.h, { id, tenantId: w.owner, grants: [w.grantee] });
      w.ownerIds.add(id);
      return {
        params: { id },
        headers: { 'idempotency-key': fresh('pool-mnt-key') },
        body: {
          selector: 'rack=b7',
          steps: [
            { kind: 'drain', deadline: '2h' },
            { kind: 'reboot' },
            { kind: 'verify' },
            { kind: 'uncordon' },
          ],
          maxConcurrent: 2,
          maxFailures: 1,
          reason: REASON,
          rebootTimeout: '15m',
          healthyAfter: '60s',
          verifyTimeout: '10m',
        },
      };
    },
    named: NAMED,
  },
  'POST /v1/operations/{id}/resume': {
    access: OPERATOR,
    status: 200,
    // A rolling maintenance paused at its maxFailures, recorded as its workflow would leave it.
    build: async (w) => ({ params: { id: await pausedRollingMaintenance(w) }, body: { reason: REASON } }),
  },
  'POST /v1/pools/{id}/drain': {
    access: tenant('compute:nodes:drain'),
    status: 202,
    build: async (w) => {
      // A pool of its own each time: a pool has one pool drain at a time.
      const id = fresh('pool-drain');
      await seedPool(w.h, { id, tenantId: w.owner, grants: [w.grantee] });
      w.ownerIds.add(id);
      return {
        params: { id },
        headers: { 'idempotency-key': fresh('pool-drain-key') },
        body: { selector: 'rack=b7', maxConcurrent: 2, deadline: '2h', reason: REASON },
      };
    },
    named: NAMED,
  },
  'POST /v1/nodes/{id}/decommission/preview': {
    access: OPERATOR,
    status: 200,
    build: async (w) => ({ params: { id: await w.node() } }),
  },
  'POST /v1/nodes/{id}/decommission': {
    access: OPERATOR,
    status: 202,
    build: async (w) => {
      const { nodeId } = await retiredNode(w.h, w.pool);
      w.ownerIds.add(nodeId);
      const shown = (await preview(w.h, nodeId)).body;
      return {
        params: { id: nodeId },
        headers: { 'idempotency-key': fresh('decommission-key') },
        body: {
          confirm: shown.hostname,
          nodeGeneration: shown.nodeGeneration,
          dependencyDigest: shown.dependencyDigest,
          operator: 'alice',
          reason: REASON,
        },
      };
    },
  },
  'POST /v1/nodes/{id}/purge': {
    access: OPERATOR,
    status: 202,
    build: async (w) => ({ params: { id: await w.node() }, body: { confirm: true, reason: REASON } }),
  },
  'POST /v1/agent/conditions': {
    access: AGENT,
    status: 200,
    // status false: a report that starts no remediation, so the agent's node stays as it is.
    build: async () => ({ body: { type: 'GpuXidError', status: false, reason: 'xid-79' } }),
  },
  'POST /v1/nodes/{id}/remediations': {
    access: tenant('compute:nodes:remediate'),
    status: 202,
    build: async (w) => ({
      params: { id: await w.node({ condition: 'GpuXidError' }) },
      body: { condition: 'GpuXidError', reason: REASON },
    }),
    named: NAMED,
  },
  'POST /v1/nodes/{id}/conditions/{type}/clear': {
    access: tenant('compute:nodes:remediate'),
    status: 200,
    build: async (w) => ({
      params: { id: await w.node({ condition: 'GpuXidError' }), type: 'GpuXidError' },
      headers: ifMatch,
      body: mutation,
    }),
    named: NAMED,
  },
  'PUT /v1/nodes/{id}/schedulers/{source}': {
    access: tenant('compute:nodes:observe'),
    status: 200,
    build: async (w) => ({
      params: { id: await w.node(), source: 'slurm:hpc1' },
      body: {
        name: 'gpu-17',
        state: 'mixed+drain',
        reason: REASON,
        cordoned: true,
        cordonedByDrydock: false,
        down: false,
        disagreement: REASON,
      },
    }),
    named: NAMED,
  },
  'GET /v1/operations/{id}': read(async (w) => ({ params: { id: await w.operation() } })),
  'GET /v1/operations': read(
    async () => ({ query: { nodeId: newId('node'), kind: 'drain', status: 'running', limit: '10' } }),
    false,
  ),
  'DELETE /v1/operations/{id}': {
    access: OPERATOR,
    status: 200,
    // A drain that cannot finish (its node holds an allocation), so there is one to cancel.
    build: async (w) => {
      const nodeId = await w.node();
      await must(
        call(w.h, 'POST', '/v1/allocations', { body: { nodeId, tenantId: w.owner, kind: 'job' } }),
        201,
      );
      const drain = await must(call(w.h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: {} }), 202);
      // Begun and asleep until its next look, minutes off: the refusals meet a record at rest.
      const id: string = drain.body.operation.id;
      await eventually(async () => {
        const op = await call(w.h, 'GET', `/v1/operations/${id}`);
        const [outbox] = await w.h.db.select({ rows: count() }).from(workflowOutbox);
        return op.body.progress?.phase === 'waiting' && outbox!.rows === 0 ? true : undefined;
      });
      return { params: { id }, body: { reason: REASON } };
    },
  },
  'POST /v1/allocations': {
    access: tenant('compute:allocations:write'),
    status: 201,
    build: async (w) => ({
      body: {
        nodeId: await w.node(),
        tenantId: w.owner,
        kind: 'job',
        endsAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
    }),
    named: {
      stranger: (c, w) => ({ ...c, body: { ...(c.body as object), tenantId: w.stranger } }),
      missing: (c) => ({ ...c, body: { ...(c.body as object), nodeId: newId('node') } }),
    },
  },
  'GET /v1/allocations': {
    access: tenant('compute:nodes:read', 'filtered'),
    status: 200,
    build: async (w) => {
      const nodeId = await w.node();
      await placed(w, nodeId);
      return { query: { nodeId, tenantId: w.owner, live: 'true', limit: '10' } };
    },
  },
  'GET /v1/allocations/{id}': {
    access: tenant('compute:nodes:read', 'hidden'),
    status: 200,
    build: async (w) => ({ params: { id: await placed(w, await w.node()) } }),
    named: NAMED,
  },
  'POST /v1/allocations/{id}/release': {
    access: tenant('compute:allocations:write'),
    status: 200,
    build: async (w) => ({ params: { id: await placed(w, await w.node()) } }),
    named: NAMED,
  },
  'POST /v1/allocations/{id}/ending': {
    access: tenant('compute:allocations:observe'),
    status: 200,
    build: async (w) => ({
      params: { id: await endRequested(w) },
      body: { action: 'requeue', answer: REASON },
    }),
    named: NAMED,
  },
  'PUT /v1/nodes/{id}/artifact-copies/{artifactId}': {
    access: tenant('compute:artifacts:write'),
    status: 201,
    build: async (w) => ({
      params: { id: await w.node(), artifactId: fresh('weights') },
      body: { path: '/data/models/weights', reason: REASON },
    }),
    named: NAMED,
  },
  'DELETE /v1/nodes/{id}/artifact-copies/{artifactId}': {
    access: tenant('compute:artifacts:write'),
    status: 200,
    build: async (w) => {
      const { nodeId, artifactId } = await copied(w);
      return { params: { id: nodeId, artifactId }, body: { reason: REASON } };
    },
    named: NAMED,
  },
  'GET /v1/nodes/{id}/artifact-copies': read(async (w) => ({
    params: { id: (await copied(w)).nodeId },
    query: { limit: '10' },
  })),
  'GET /v1/artifacts/{artifactId}/copies': read(
    async (w) => ({ params: { artifactId: (await copied(w)).artifactId }, query: { limit: '10' } }),
    false,
  ),
  'POST /v1/pools': {
    access: OPERATOR,
    status: 201,
    build: async (w) => {
      const id = fresh('pool');
      w.ownerIds.add(id);
      return {
        body: {
          id,
          kind: 'provider',
          siteId: 'fra1',
          tenantId: w.owner,
          ...EVERY_POOL_SETTING,
        },
      };
    },
  },
  'PATCH /v1/pools/{id}': {
    access: OPERATOR,
    status: 200,
    build: async (w) => {
      // A pool of its own each time, at version 1.
      const id = fresh('pool-patch');
      await seedPool(w.h, { id, tenantId: w.owner });
      w.ownerIds.add(id);
      return {
        params: { id },
        headers: ifMatch,
        body: {
          ...EVERY_POOL_SETTING,
          reason: REASON,
        },
      };
    },
  },
  'GET /v1/pools': read(async () => ({}), false),
  'GET /v1/whoami': read(async () => ({}), false),
  'GET /v1/pools/{id}': read(async (w) => ({ params: { id: w.pool } })),
  'GET /v1/pools/{id}/capacity': read(async (w) => ({ params: { id: w.pool } })),
  'GET /v1/pools/{id}/capacity/history': read(async (w) => ({ params: { id: w.pool } })),
  'POST /v1/keys': {
    access: OPERATOR,
    status: 201,
    build: async (w) => ({
      body: { name: fresh('key'), tenantId: w.owner, actions: ['compute:nodes:read'] },
    }),
  },
  'GET /v1/keys': { access: OPERATOR, status: 200, build: async () => ({}) },
  'DELETE /v1/keys/{id}': {
    access: OPERATOR,
    status: 200,
    build: async (w) => ({
      params: { id: (await tenantKey(w.h, w.owner, ['compute:nodes:read'], fresh('k'))).id },
    }),
  },
  'POST /v1/keys/{id}/rotate': {
    access: OPERATOR,
    status: 201,
    build: async (w) => ({
      params: { id: (await tenantKey(w.h, w.owner, ['compute:nodes:read'], fresh('k'))).id },
      body: { graceSeconds: 60 },
    }),
  },
  'POST /v1/tokens': {
    access: tenant('compute:tokens:write'),
    status: 201,
    build: async (w) => ({
      body: {
        poolId: w.pool,
        ttl: '1h',
        maxUses: 5,
        labels: { team: 'data' },
        description: 'exemplar token',
      },
    }),
    named: { missing: (c) => ({ ...c, body: { ...(c.body as object), poolId: fresh('no-such-pool') } }) },
  },
  'GET /v1/tokens': {
    access: tenant('compute:tokens:read', 'filtered'),
    status: 200,
    build: async () => ({}),
  },
  'DELETE /v1/tokens/{id}': {
    access: tenant('compute:tokens:write', 'hidden'),
    status: 200,
    build: async (w) => {
      const created = await createToken(w.h, { poolId: w.pool });
      w.ownerIds.add(created.id);
      return { params: { id: created.id } };
    },
    named: NAMED,
  },
  'POST /v1/nodes/{id}/block': control('compute:nodes:block'),
  'POST /v1/nodes/{id}/unblock': control('compute:nodes:block'),
  'POST /v1/nodes/{id}/reject': pendingControl(async () => ({})),
  'POST /v1/nodes/{id}/approve': pendingControl(async (w) => ({ poolId: w.pool })),
  'POST /v1/nodes/{id}/revoke-identity': control('compute:nodes:revoke-identity'),
  'POST /v1/agent/join': {
    access: PUBLIC,
    status: 201,
    build: async (w) => ({
      body: {
        token: w.token,
        publicKey: newPublicKey(),
        hostname: fresh('gpu'),
        displayName: 'GPU exemplar',
        poolId: w.pool,
        inventory: {
          accelerators: [{ model: 'H100', serial: 'GPU-0001', memoryBytes: 85_899_345_920 }],
          storageRoots: [{ path: '/var/lib/drydock', bytes: 2_000_000_000 }],
          cpu: { count: 192, model: 'AMD EPYC 9654 96-Core Processor' },
          memoryBytes: 2_163_988_934_656,
        },
      },
    }),
  },
  'POST /v1/agent/heartbeat': {
    access: { kind: 'agent', pending: true },
    status: 200,
    build: async () => ({ body: { state: 'running' } }),
  },
  'POST /v1/agent/credentials/nonce': {
    access: { kind: 'agent', pending: true },
    status: 200,
    build: async () => ({ body: {} }),
  },
  // The matrix's node holds no key here: its renewal is refused for the nonce it was never handed
  // (test/identity/credential-renewal.test.ts renews for real). Every other caller is refused first.
  'POST /v1/agent/credentials/renew': {
    access: { kind: 'agent', pending: true },
    status: 400,
    build: async () => ({ body: { nonce: 'n'.repeat(43), signature: `${'A'.repeat(86)}==` } }),
  },
  'GET /v1/agent/commands': {
    access: { kind: 'agent', pending: true },
    status: 200,
    build: async () => ({ query: { wait: '0' } }),
  },
  'POST /v1/agent/commands/{id}/ack': {
    access: AGENT,
    status: 200,
    build: async (w) => ({ params: { id: await command(w) }, body: {} }),
  },
  'POST /v1/agent/commands/{id}/refuse': {
    access: AGENT,
    status: 200,
    build: async (w) => ({ params: { id: await command(w) }, body: { reason: 'not now: a job runs' } }),
  },
  'POST /v1/nodes/{id}/commands': {
    access: tenant('compute:nodes:command'),
    status: 201,
    build: async (w) => ({
      params: { id: await w.node() },
      headers: { 'idempotency-key': `run-${newId('op')}` },
      body: { action: 'logs', args: { since: '2h' }, reason: REASON, expiresIn: '2h' },
    }),
    named: NAMED,
  },
  'POST /v1/nodes/{id}/ssh-certificates': {
    access: tenant('compute:nodes:ssh-root'),
    status: 201,
    build: async (w) => ({
      params: { id: await w.node() },
      body: { publicKey: SSH_PUBLIC_KEY, reason: REASON, ttl: '30m' },
    }),
    named: NAMED,
  },
  'GET /v1/nodes/{id}/ssh-certificates': {
    access: tenant('compute:nodes:read', 'forbidden'),
    status: 200,
    build: async (w) => ({ params: { id: await w.node() }, query: { limit: '10' } }),
    named: NAMED,
  },
  'POST /v1/nodes/{id}/ssh-certificates/{serial}/revoke': {
    access: tenant('compute:nodes:ssh-root'),
    status: 200,
    build: async (w) => {
      const id = await w.node();
      return { params: { id, serial: await sshCertificate(w, id) }, body: { reason: REASON } };
    },
    named: NAMED,
  },
  'GET /v1/agent/ssh': { access: AGENT, status: 200, build: async () => ({}) },
  'POST /v1/nodes/{id}/maintenances': {
    access: tenant('compute:nodes:command'),
    status: 202,
    build: async (w) => ({
      params: { id: await w.node() },
      headers: { 'idempotency-key': `mnt-${newId('op')}` },
      body: {
        reason: REASON,
        steps: [
          { kind: 'drain', deadline: '2h' },
          { kind: 'run', action: 'driver-upgrade', args: { version: '570' } },
          { kind: 'reboot' },
          { kind: 'verify', action: 'acceptance' },
          { kind: 'uncordon' },
        ],
        rebootTimeout: '15m',
        healthyAfter: '60s',
        verifyTimeout: '10m',
      },
    }),
    named: NAMED,
  },
  'POST /v1/nodes/{id}/reboot': {
    access: tenant('compute:nodes:command'),
    status: 202,
    build: async (w) => ({
      params: { id: await w.node() },
      headers: { 'idempotency-key': `rbt-${newId('op')}` },
      body: {
        reason: REASON,
        drain: { deadline: '2h' },
        uncordon: true,
        rebootTimeout: '15m',
        healthyAfter: '60s',
        verifyTimeout: '10m',
      },
    }),
    named: NAMED,
  },
  'GET /v1/nodes/{id}/actions': {
    access: tenant('compute:nodes:read', 'forbidden'),
    status: 200,
    build: async (w) => ({ params: { id: await w.node() } }),
    named: NAMED,
  },
  'GET /v1/nodes/{id}/commands': {
    access: tenant('compute:nodes:read', 'forbidden'),
    status: 200,
    build: async (w) => ({
      params: { id: await w.node() },
      query: { kind: 'run', status: 'pending', limit: '10' },
    }),
    named: NAMED,
  },
  'GET /v1/commands/{id}': {
    access: tenant('compute:nodes:command'),
    status: 200,
    build: async (w) => ({ params: { id: await runCommand(w, await w.node()) }, query: { wait: '0' } }),
    named: NAMED,
  },
  'DELETE /v1/commands/{id}': {
    access: tenant('compute:nodes:command'),
    status: 200,
    build: async (w) => ({ params: { id: await runCommand(w, await w.node()) } }),
    named: NAMED,
  },
  'POST /v1/agent/commands/{id}/start': {
    access: AGENT,
    status: 200,
    build: async (w) => ({ params: { id: await runCommand(w, w.agent.nodeId) }, body: {} }),
  },
  'POST /v1/agent/commands/{id}/result': {
    access: AGENT,
    status: 200,
    build: async (w) => ({
      params: { id: await runCommand(w, w.agent.nodeId, 'running') },
      body: {
        status: 'failed',
        reason: 'exited 3',
        exitCode: 3,
        stdout: 'b3V0',
        stderr: 'ZXJy',
        droppedBytes: 0,
      },
    }),
  },
  'PUT /v1/agent/inventory': {
    access: { kind: 'agent', pending: true },
    status: 200,
    build: async () => ({
      body: {
        accelerators: [{ model: 'H100', serial: 'GPU-0001', memoryBytes: 85_899_345_920 }],
        storageRoots: [{ path: '/data', bytes: 7_680_000_000_000 }],
        cpu: { count: 192, model: 'AMD EPYC 9654 96-Core Processor' },
        memoryBytes: 2_163_988_934_656,
      },
    }),
  },
  'PUT /v1/agent/facts': {
    access: { kind: 'agent', pending: true },
    status: 200,
    build: async () => ({
      body: {
        bootId: '6b1f0c2e-6f57-4d7e-9a51-0e8f5d2c9b11',
        bootedAt: '2026-12-04T08:00:00Z',
        actions: [
          {
            name: 'logs',
            params: { since: { pattern: '[0-9]+[smhd]', default: '1h' } },
            timeoutSeconds: 60,
            restarts: false,
          },
        ],
      },
    }),
  },
  'POST /v1/agent/commands/{id}/returned': {
    access: AGENT,
    status: 200,
    build: async (w) => ({ params: { id: await command(w, 'acked') }, body: {} }),
  },
  'GET /healthz': { access: PUBLIC, status: 200, build: async () => ({}) },
  'GET /readyz': { access: PUBLIC, status: 200, build: async () => ({}) },
  'GET /metrics': { access: PUBLIC, status: 200, build: async () => ({}) },
  'GET /openapi.json': { access: PUBLIC, status: 200, build: async () => ({}) },
  'GET /docs': { access: PUBLIC, status: 200, build: async () => ({}) },
  [`GET ${REFERENCE_SCRIPT_PATH}`]: { access: PUBLIC, status: 200, build: async () => ({}) },
};

/** The credential the right caller of a route presents (null: none). */
export async function rightCaller(world: World, access: Access): Promise<string | null> {
  switch (access.kind) {
    case 'public':
      return null;
    case 'operator':
      return world.h.operatorKey;
    case 'tenant':
      return world.keyWith(access.action);
    case 'agent':
      return world.agent.credential;
  }
}

/** The path of `route` with `call`'s params (already encoded as the caller wants them). */
export function pathOf(route: RouteSpec, params: Record<string, string> = {}): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route.key}: no value for {${name}}`);
    return value;
  });
}

/** `call` sent to `route` with `token` (null: no credential), through fixtures' `call`. */
export function send(h: Harness, route: RouteSpec, c: Call, token: string | null): Promise<Reply> {
  const encoded = Object.fromEntries(
    Object.entries(c.params ?? {}).map(([k, v]) => [k, encodeURIComponent(v)]),
  );
  const search = new URLSearchParams(c.query ?? {}).toString();
  return call(h, route.method, `${pathOf(route, encoded)}${search ? `?${search}` : ''}`, {
    token,
    body: c.body,
    headers: c.headers,
  });
}

/** Every route with its exemplar; throws naming any route without one or exemplar without a route. */
export function routeTable(app: App): { route: RouteSpec; exemplar: Exemplar }[] {
  const routes = [...routeSpecs(app), ...PLAIN_ROUTES];
  const keys = new Set(routes.map((r) => r.key));
  const unserved = servedRoutes(app).filter((key) => !keys.has(key));
  const missing = routes.filter((r) => !EXEMPLARS[r.key]).map((r) => r.key);
  const stale = Object.keys(EXEMPLARS).filter((key) => !keys.has(key));
  if (unserved.length || missing.length || stale.length) {
    throw new Error(
      `route table out of date: served but not in the OpenAPI registry nor PLAIN_ROUTES: ${unserved.join(', ') || '-'}; ` +
        `without an exemplar: ${missing.join(', ') || '-'}; exemplars of no route: ${stale.join(', ') || '-'}`,
    );
  }
  return routes.map((route) => ({ route, exemplar: EXEMPLARS[route.key]! }));
}

/**
 * Waits, bounded, until every operation has ended. A purge waits for its node's answer and the
 * exemplars' nodes have no agent: deleting the node ends it `cancelled`, as an operator would; a
 * drain that waits on an allocation is cancelled.
 */
export async function settle(h: Harness): Promise<void> {
  await eventually(
    async () => {
      const open = await h.db
        .select({ id: operations.id, kind: operations.kind, nodeId: operations.nodeId })
        .from(operations)
        .where(inArray(operations.status, ['pending', 'running']));
      for (const op of open) {
        if (op.kind === 'purge' && op.nodeId) {
          await call(h, 'DELETE', `/v1/nodes/${op.nodeId}`, { body: { reason: 'the test is over' } });
        }
        // A drain left waiting on its allocation (the cancel exemplar's, refused to the wrong caller),
        // a maintenance waiting for a node with no agent.
        if (op.kind === 'drain' || op.kind === 'maintenance' || op.kind === 'pool-maintenance') {
          await call(h, 'DELETE', `/v1/operations/${op.id}`, { body: { reason: 'the test is over' } });
        }
      }
      // And what they asked of Temporal delivered: the outbox changes as its dispatcher works.
      const [outbox] = await h.db.select({ rows: count() }).from(workflowOutbox);
      return open.length === 0 && outbox!.rows === 0;
    },
    60_000,
    100,
  );
}

import { eq } from 'drizzle-orm';
import { newId } from '../../domain/ids';
import type { ProvisionState } from '../../domain/node';
import { nodeLabels, nodes, pools, type PoolPolicy } from '../../db/schema';
import type { Harness } from './harness';

export interface Reply<T = any> {
  status: number;
  body: T;
}

/** Calls the app in-process the way an HTTP client would. */
export async function call<T = any>(
  h: Harness,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? h.operatorKey : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  }
  const response = await h.app.request(path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T };
}

export async function seedPool(
  h: Harness,
  pool: {
    id: string;
    tenantId?: string;
    grants?: string[];
    kind?: 'bare-metal' | 'provider' | 'vps-host';
    policy?: PoolPolicy;
  },
) {
  await h.db
    .insert(pools)
    .values({
      id: pool.id,
      kind: pool.kind ?? 'bare-metal',
      siteId: 'fra1',
      tenantId: pool.tenantId ?? null,
      grants: pool.grants ?? [],
      policy: pool.policy ?? {},
    })
    .onConflictDoNothing();
}

/** A node written straight into the database (enrollment comes in a later issue). */
export async function seedNode(
  h: Harness,
  node: {
    poolId: string;
    tenantId?: string;
    hostname?: string;
    provisionState?: ProvisionState;
    labels?: Record<string, string>;
  },
): Promise<string> {
  const id = newId('node');
  // A node's tenant is its pool's, as join and approve set it, unless the test says otherwise.
  const [pool] = await h.db.select({ tenantId: pools.tenantId }).from(pools).where(eq(pools.id, node.poolId));
  await h.db.insert(nodes).values({
    id,
    poolId: node.poolId,
    tenantId: node.tenantId ?? pool?.tenantId ?? null,
    siteId: 'fra1',
    hostname: node.hostname ?? `host-${id.slice(-6)}`,
    provisionState: node.provisionState ?? 'adopted',
    connectivity: 'connected',
  });
  const labels = Object.entries(node.labels ?? {});
  if (labels.length) {
    await h.db
      .insert(nodeLabels)
      .values(labels.map(([key, value]) => ({ nodeId: id, key, value, source: 'operator' as const })));
  }
  return id;
}

/** A tenant key through the API; returns its secret and id. */
export async function tenantKey(h: Harness, tenantId: string, actions: string[], name = `t-${tenantId}`) {
  const reply = await call(h, 'POST', '/v1/keys', { body: { name, tenantId, actions } });
  if (reply.status !== 201) throw new Error(`key creation failed: ${JSON.stringify(reply.body)}`);
  return { id: reply.body.id as string, secret: reply.body.secret as string };
}

export async function allocate(h: Harness, nodeId: string, tenantId: string, endsAt?: Date) {
  const reply = await call(h, 'POST', '/v1/allocations', {
    body: { nodeId, tenantId, kind: 'job', ...(endsAt ? { endsAt: endsAt.toISOString() } : {}) },
  });
  if (reply.status !== 201) throw new Error(`allocation failed: ${JSON.stringify(reply.body)}`);
  return reply.body.id as string;
}

export async function eventsOf(h: Harness, nodeId: string, type?: string) {
  const reply = await call(h, 'GET', `/v1/nodes/${nodeId}/events${type ? `?type=${type}` : ''}`);
  return reply.body.items as {
    type: string;
    operationId: string | null;
    actor: string;
    reason: string | null;
    data: Record<string, unknown>;
  }[];
}

import { format, resolveConfig } from 'prettier';
import { describe, expect, it } from 'vitest';
import type { OpenApiExamples } from '../api/openapi';
import { drainWorkflowId, poolDrainWorkflowId } from '../workflows/definitions';
import { newPublicKey } from './support/agents';
import { workflowResult } from './support/builders';
import { INVENTORY, retiredNode } from './support/decommission';
import { call, seedPool, type Reply } from './support/fixtures';
import { useHarness } from './support/harness';

/**
 * The examples of the OpenAPI document (api/openapi-examples.json) are what this walk through the
 * real API sent and got back, so they cannot drift from it: a change to a body fails here. After a
 * deliberate change, `npx vitest run test/openapi-examples.test.ts -u` writes the file anew.
 */

const h = useHarness();
const EXAMPLES_FILE = new URL('../api/openapi-examples.json', import.meta.url).pathname;

const recorded: OpenApiExamples = { operations: {}, errors: {} };

/** Calls the API and records the request body and the answer as `operationId`'s example. */
async function recordCall(
  operationId: string,
  method: string,
  path: string,
  options: { body?: Record<string, unknown>; headers?: Record<string, string>; token?: string | null } = {},
): Promise<Reply> {
  const reply = await call(h, method, path, options);
  const entry = (recorded.operations[operationId] ??= { request: options.body, responses: {} });
  entry.responses[String(reply.status)] = reply.body;
  return reply;
}

/** Records an error answer as the example of its code. */
function recordError(reply: Reply): void {
  expect(reply.status).toBeGreaterThanOrEqual(400);
  recorded.errors[reply.body.error.code as keyof OpenApiExamples['errors']] = reply.body;
}

const ULID_ID = /\b(node|op|alloc|jt|key|cmd)_[0-9a-hjkmnp-tv-z]{26}\b/g;
const TIME = /\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b/g;
const DIGEST = /\bsha256:[0-9a-f]{64}\b/g;
const REQUEST_ID = /\breq_[0-9a-f-]{36}\b/g;
const SECRET = /\b(ddk|ddo|ddj|ddn)_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g;
/** A PEM public key inside a JSON string (its line breaks written `\n`). */
const PUBLIC_KEY = /-----BEGIN PUBLIC KEY-----(?:\\n[A-Za-z0-9+/=]+)+\\n-----END PUBLIC KEY-----(?:\\n)?/g;
/** An Ed25519 public key in PEM: the one every key of an example becomes. */
const EXAMPLE_PUBLIC_KEY =
  '-----BEGIN PUBLIC KEY-----\\nMCowBQYDK2VwAyEAqlBHLKYRN3bsjvbfBvj2NanhAeJxYMsfKMNxrJ4wFTs=\\n-----END PUBLIC KEY-----\\n';

/**
 * What changes from run to run, made fixed: each id becomes a stable one of its kind (the n-th
 * of that kind seen); times, digests, request ids, secrets, public keys and the cluster's id one
 * value each (a secret keeps its prefix). Ids keep their form, so an example still passes its
 * schema.
 */
function normalised(examples: OpenApiExamples): OpenApiExamples {
  const ids = new Map<string, string>();
  const seen = new Map<string, number>();
  const text = JSON.stringify(examples)
    .replaceAll(JSON.stringify(h.deps.clusterId), JSON.stringify('drydock-fra1'))
    .replace(ULID_ID, (id, prefix: string) => {
      if (!ids.has(id)) {
        const n = (seen.get(prefix) ?? 0) + 1;
        seen.set(prefix, n);
        ids.set(id, `${prefix}_01k5w8v3x9q2m4n6p8r0s2t${String(n).padStart(3, '0')}`);
      }
      return ids.get(id)!;
    })
    .replace(TIME, '2026-03-02T09:30:00.000Z')
    .replace(DIGEST, `sha256:${'4f1c'.repeat(16)}`)
    .replace(REQUEST_ID, 'req_6a1d2c3e-5f70-4b8a-9c1d-2e3f4a5b6c7d')
    .replace(SECRET, (_secret, prefix: string) => `${prefix}_${'x7Qm2Vb9Lr4Tn8Kd'.repeat(3).slice(0, 43)}`)
    .replace(PUBLIC_KEY, EXAMPLE_PUBLIC_KEY);
  return JSON.parse(text) as OpenApiExamples;
}

describe('the examples of the OpenAPI document', () => {
  it('are the bodies the API really sends and answers', async () => {
    // Enrollment: a pool, a join token for it, and a machine's agent joining with it.
    const pool = await recordCall('createPool', 'POST', '/v1/pools', {
      body: { id: 'pool-h100-east', kind: 'bare-metal', siteId: 'fra1', tenantId: 'acme' },
    });
    expect(pool.status, JSON.stringify(pool.body)).toBe(201);
    const changed = await recordCall('updatePool', 'PATCH', '/v1/pools/pool-h100-east', {
      body: {
        grants: ['globex'],
        policy: { maxUnavailable: '25%', remediation: { GpuXidError: { attemptTimeout: '5m' } } },
        reason: 'rack b7 roll-out',
      },
      headers: { 'if-match': '"1"' },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    const token = await recordCall('createJoinToken', 'POST', '/v1/tokens', {
      body: { poolId: 'pool-h100-east', ttl: '24h', maxUses: 10, description: 'rack b7 intake' },
    });
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    const join = (hostname: string, options: { record?: boolean; inventory?: unknown } = {}) => {
      const request = {
        token: null,
        body: { token: token.body.secret, hostname, publicKey: newPublicKey(), inventory: options.inventory },
      };
      return options.record
        ? recordCall('joinCluster', 'POST', '/v1/agent/join', request)
        : call(h, 'POST', '/v1/agent/join', request);
    };
    const joined = await join('gpu-b7-01', { record: true, inventory: INVENTORY });
    expect(joined.status, JSON.stringify(joined.body)).toBe(201);
    const nodeId = joined.body.nodeId as string;

    // Reading and the one-axis controls, before any workflow can move the node.
    const labelled = await recordCall('labelNode', 'POST', `/v1/nodes/${nodeId}/label`, {
      body: { set: { rack: 'b7', team: 'ml-infra' }, reason: 'racked in b7' },
    });
    expect(labelled.status, JSON.stringify(labelled.body)).toBe(200);
    const tainted = await recordCall('taintNode', 'POST', `/v1/nodes/${nodeId}/taint`, {
      body: { add: ['nvlink-degraded'], reason: 'NVLink errors on GPU 3' },
    });
    expect(tainted.status).toBe(200);
    const cordoned = await recordCall('cordonNode', 'POST', `/v1/nodes/${nodeId}/cordon`, {
      body: { reason: 'firmware update', version: tainted.body.version },
    });
    expect(cordoned.body).toMatchObject({ cordoned: true, version: tainted.body.version + 1 });
    expect((await recordCall('getNode', 'GET', `/v1/nodes/${nodeId}`)).body).toEqual(cordoned.body);
    const listed = await recordCall('listNodes', 'GET', '/v1/nodes?poolId=pool-h100-east');
    expect(listed.body).toEqual({ items: [cordoned.body], nextCursor: null, prevCursor: null });
    const summary = await recordCall('summarizeNodes', 'GET', '/v1/node-summary?poolId=pool-h100-east');
    expect(summary.body).toMatchObject({
      total: 1,
      counts: { alive: 1, cordoned: 1 },
      groups: [{ nodes: [{ id: nodeId, state: 'cordoned' }] }],
    });

    // The error envelope: a stale version (nothing changes), an unknown node, a bad body.
    const stale = await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`, { body: { version: 1 } });
    expect(stale.status).toBe(409);
    recordError(stale);
    const missing = await call(h, 'GET', '/v1/nodes/node_01k5w8v3x9q2m4n6p8r0s2t4v6');
    expect(missing.status).toBe(404);
    recordError(missing);
    const invalid = await call(h, 'POST', `/v1/nodes/${nodeId}/taint`, { body: { add: ['no spaces'] } });
    expect(invalid.status).toBe(400);
    recordError(invalid);
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}`)).body).toEqual(cordoned.body);

    // A drain of the empty node ends at once; its operation is then read back.
    const drain = await recordCall('drainNode', 'POST', `/v1/nodes/${nodeId}/drain`, {
      body: { reason: 'firmware update', deadline: '2h' },
      headers: { 'idempotency-key': 'change-4711-drain' },
    });
    expect(drain.status).toBe(202);
    await workflowResult(h, drainWorkflowId(nodeId));
    const operation = await recordCall('getOperation', 'GET', `/v1/operations/${drain.body.operation.id}`);
    expect(operation.body).toMatchObject({ kind: 'drain', status: 'succeeded', nodeId });

    // A decommission of a machine whose agent said goodbye: its preview, then the execute.
    const retired = await retiredNode(h, 'pool-h100-east', 'gpu-b7-02');
    const preview = await recordCall(
      'previewDecommission',
      'POST',
      `/v1/nodes/${retired.nodeId}/decommission/preview`,
    );
    expect(preview.body).toMatchObject({ ready: true, blockers: [] });
    const executed = await recordCall(
      'executeDecommission',
      'POST',
      `/v1/nodes/${retired.nodeId}/decommission`,
      {
        body: {
          confirm: preview.body.hostname,
          nodeGeneration: preview.body.nodeGeneration,
          dependencyDigest: preview.body.dependencyDigest,
          operator: 'alice',
          reason: 'EOL: leaving the fleet',
        },
        headers: { 'idempotency-key': 'change-4712-decommission' },
      },
    );
    expect(executed.status).toBe(202);

    // A purge and a remediation, each on a node of its own.
    const purged = await join('gpu-b7-03');
    const purge = await recordCall('purgeNode', 'POST', `/v1/nodes/${purged.body.nodeId}/purge`, {
      body: { confirm: true, reason: 'sold to a reseller' },
    });
    expect(purge.status).toBe(202);
    const faulty = await join('gpu-b7-04');
    const remediation = await recordCall(
      'remediateNode',
      'POST',
      `/v1/nodes/${faulty.body.nodeId}/remediations`,
      {
        body: { condition: 'GpuXidError', reason: 'XID 79: GPU fell off the bus' },
      },
    );
    expect(remediation.status).toBe(202);
    const cleared = await recordCall(
      'clearNodeCondition',
      'POST',
      `/v1/nodes/${faulty.body.nodeId}/conditions/GpuXidError/clear`,
      { body: { reason: 'GPU reseated; dcgm diag passes' } },
    );
    expect(cleared.status, JSON.stringify(cleared.body)).toBe(200);

    // A pool drain of the nodes of rack c3 (one here), then the node drains it ran.
    await seedPool(h, { id: 'pool-a100-west', tenantId: 'acme' });
    const west = await call(h, 'POST', '/v1/tokens', {
      body: { poolId: 'pool-a100-west', ttl: '1h', maxUses: 1 },
    });
    const c3 = await call(h, 'POST', '/v1/agent/join', {
      token: null,
      body: { token: west.body.secret, hostname: 'gpu-c3-01', publicKey: newPublicKey() },
    });
    expect(c3.status).toBe(201);
    await call(h, 'POST', `/v1/nodes/${c3.body.nodeId}/label`, { body: { set: { rack: 'c3' } } });
    const poolDrain = await recordCall('drainPool', 'POST', '/v1/pools/pool-a100-west/drain', {
      body: { selector: 'rack=c3', maxConcurrent: 4, deadline: '2h', reason: 'driver roll-out' },
      headers: { 'idempotency-key': 'change-4713-pool-drain' },
    });
    expect(poolDrain.status, JSON.stringify(poolDrain.body)).toBe(202);
    await workflowResult(h, poolDrainWorkflowId('pool-a100-west'));
    const operations = await recordCall(
      'listOperations',
      'GET',
      '/v1/operations?poolId=pool-a100-west&kind=drain',
    );
    expect(operations.body).toMatchObject({
      items: [{ kind: 'drain', nodeId: c3.body.nodeId, status: 'succeeded' }],
      nextCursor: null,
    });
    const poolDrained = await call(h, 'GET', `/v1/operations/${poolDrain.body.operation.id}`);
    expect(poolDrained.body).toMatchObject({ kind: 'pool-drain', status: 'succeeded' });

    const options = await resolveConfig(EXAMPLES_FILE);
    const file = await format(JSON.stringify(normalised(recorded)), { ...options, filepath: EXAMPLES_FILE });
    await expect(file).toMatchFileSnapshot(EXAMPLES_FILE);
  });
});

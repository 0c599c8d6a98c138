import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../db/schema';
import { joinedNode } from '../support/agents';
import { readNode, setNode } from '../support/builders';
import { call, eventsOf, seedPool, tenantKey, type Reply } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

// Attempts wait the default 10 minutes: a remediation started here keeps running while the test looks at it.
const h = useHarness();

let acme: string;
beforeAll(async () => {
  acme = (await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:remediate'], 'acme-idem')).secret;
});

const purge = (nodeId: string, key: string, reason = 'laptop returned') =>
  call(h, 'POST', `/v1/nodes/${nodeId}/purge`, {
    headers: { 'idempotency-key': key },
    body: { confirm: true, reason },
  });

const remediate = (nodeId: string, key: string, condition = 'GpuXidError', token?: string) =>
  call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
    token,
    headers: { 'idempotency-key': key },
    body: { condition, reason: 'ops ticket 9' },
  });

/** Resolves once the operation's workflow has done its first steps: nothing more changes by itself. */
/**
 * The operation at rest in `phase`: a purge waiting for its node, or a remediation whose attempt
 * has begun (its command and event written: its begin says `attempting` a step before that).
 */
const settled = (id: string, phase: string) =>
  eventually(async () => {
    const progress = (await call(h, 'GET', `/v1/operations/${id}`)).body.progress;
    return progress?.phase === phase && (phase !== 'attempting' || progress.waitingFor?.action != null);
  });

/** The request is refused as a reused key, and the node and its events stay as they were. */
async function refusedWithoutChange(nodeId: string, request: () => Promise<Reply>) {
  const [before, events] = [await readNode(h, nodeId), await eventsOf(h, nodeId)];
  const reply = await request();
  expect(reply.status).toBe(422);
  expect(reply.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  expect(await readNode(h, nodeId)).toEqual(before);
  expect(await eventsOf(h, nodeId)).toEqual(events);
}

/**
 * A retry answered from its key: 200 with the first answer's operation, as it now stands (still
 * open: `pending`, or `running` once a worker began it).
 */
function expectReplayed(first: Reply, again: Reply, key: string) {
  expect(again.status).toBe(200);
  expect(again.body.operation).toMatchObject({
    id: first.body.operation.id,
    kind: first.body.operation.kind,
    idempotencyKey: key,
  });
  expect(['pending', 'running']).toContain(again.body.operation.status);
}

const operationsWithKey = (key: string) =>
  h.db.select().from(operations).where(eq(operations.idempotencyKey, key));

const operationsOf = async (nodeId: string, kind: string) =>
  (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=${kind}`)).body.items as { id: string }[];

/** A node of an acme pool that reports a condition no remediation has taken up yet. */
async function faultyNode(poolId: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
  const { nodeId } = await joinedNode(h, poolId);
  const since = new Date().toISOString();
  await setNode(h, nodeId, {
    noScheduleReasons: ['condition:GpuXidError', 'condition:NicFlap'],
    conditions: [
      { type: 'GpuXidError', status: true, reason: 'xid-79', since },
      { type: 'NicFlap', status: true, reason: 'link down', since },
    ],
  });
  return nodeId;
}

/** A joined node of its own pool whose purge began with the key. */
async function purgeStarted(poolId: string, key: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme' });
  const { nodeId } = await joinedNode(h, poolId);
  const first = await purge(nodeId, key);
  expect(first.status).toBe(202);
  expect(first.body.operation).toMatchObject({
    kind: 'purge',
    status: 'pending',
    idempotencyKey: key,
    progress: { phase: 'waiting-for-worker' },
  });
  return { nodeId, first };
}

describe('Idempotency-Key on purge', () => {
  it('a retry gets its operation back: one purge, one node.purge.requested', async () => {
    const key = 'change-5101-purge';
    const { nodeId, first } = await purgeStarted('pool-ip1', key);
    expectReplayed(first, await purge(nodeId, key), key);
    await settled(first.body.operation.id, 'waiting-for-node');
    expect(await operationsWithKey(key)).toHaveLength(1);
    expect(await operationsOf(nodeId, 'purge')).toHaveLength(1);
    expect(await eventsOf(h, nodeId, 'node.purge.requested')).toHaveLength(1);
  });

  it('the same key with another reason is refused and changes nothing', async () => {
    const key = 'change-5102-purge';
    const { nodeId, first } = await purgeStarted('pool-ip2', key);
    await settled(first.body.operation.id, 'waiting-for-node');
    await refusedWithoutChange(nodeId, () => purge(nodeId, key, 'another reason'));
    expect((await operationsWithKey(key)).map((op) => op.id)).toEqual([first.body.operation.id]);
  });
});

describe('Idempotency-Key on remediations', () => {
  it('a retry gets its operation back; another caller with the key is its own request', async () => {
    const nodeId = await faultyNode('pool-ir1');
    const key = 'change-5201-remediate';
    const first = await remediate(nodeId, key);
    expect(first.status).toBe(202);
    expect(first.body.operation).toMatchObject({
      kind: 'remediation',
      status: 'pending',
      progress: { phase: 'waiting-for-worker' },
    });
    expectReplayed(first, await remediate(nodeId, key), key);
    expect(await operationsOf(nodeId, 'remediation')).toHaveLength(1);

    // acme's same key is fresh for acme: it joins the running remediation, it is not refused.
    const tenant = await remediate(nodeId, key, 'NicFlap', acme);
    expect(tenant.status).toBe(200);
    expect(tenant.body.operation.id).toBe(first.body.operation.id);
    expect(await operationsOf(nodeId, 'remediation')).toHaveLength(1);
    expect(await operationsWithKey(key)).toHaveLength(1);
  });

  it('the same key for another condition is refused and changes nothing', async () => {
    const nodeId = await faultyNode('pool-ir2');
    const key = 'change-5202-remediate';
    const first = await remediate(nodeId, key);
    expect(first.status).toBe(202);
    await settled(first.body.operation.id, 'attempting');
    await refusedWithoutChange(nodeId, () => remediate(nodeId, key, 'NicFlap'));
    expect((await operationsOf(nodeId, 'remediation')).map((op) => op.id)).toEqual([first.body.operation.id]);
  });
});

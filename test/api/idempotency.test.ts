import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../db/schema';
import { readNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness();

const DRAINER = ['compute:nodes:read', 'compute:nodes:drain'];

type Caller = 'acme' | 'globex' | 'operator';
const POOLS: Record<Caller, { poolId: string; tenantId?: string }> = {
  acme: { poolId: 'pool-acme', tenantId: 'acme' },
  globex: { poolId: 'pool-globex', tenantId: 'globex' },
  operator: { poolId: 'pool-ops' },
};
/** Three callers: two tenant keys that may drain their own pools, and the bootstrap operator key. */
const tokens = {} as Record<Caller, string>;

beforeAll(async () => {
  for (const pool of Object.values(POOLS)) await seedPool(h, { id: pool.poolId, tenantId: pool.tenantId });
  tokens.acme = (await tenantKey(h, 'acme', DRAINER)).secret;
  tokens.globex = (await tenantKey(h, 'globex', DRAINER)).secret;
  tokens.operator = h.operatorKey;
});

/** A node of the caller's pool holding an allocation, so a drain of it keeps running. */
async function nodeOf(caller: Caller): Promise<string> {
  const nodeId = await seedNode(h, POOLS[caller]);
  await allocate(h, nodeId, POOLS[caller].tenantId ?? 'acme');
  return nodeId;
}

function drain(caller: Caller, nodeId: string, key: string, reason = 'swap fans') {
  return call(h, 'POST', `/v1/nodes/${nodeId}/drain`, {
    token: tokens[caller],
    headers: { 'idempotency-key': key },
    body: { reason },
  });
}

async function operationsWithKey(key: string) {
  return h.db.select().from(operations).where(eq(operations.idempotencyKey, key));
}

describe('Idempotency-Keys are scoped to the caller', () => {
  it('the same key from three callers makes three operations; each retry gets its own back', async () => {
    const key = 'change-4711-drain';
    const callers: Caller[] = ['acme', 'globex', 'operator'];
    const nodes = await Promise.all(callers.map(nodeOf));
    const first = [];
    for (const [i, caller] of callers.entries()) first.push(await drain(caller, nodes[i]!, key));
    expect(first.map((r) => r.status)).toEqual([202, 202, 202]);
    const ids = first.map((r) => r.body.operation.id as string);
    expect(new Set(ids).size).toBe(3);
    expect(first.map((r) => r.body.operation.nodeId)).toEqual(nodes);

    // Each retry, after the others used the key: its own operation, nothing new.
    const retries = await Promise.all(callers.map((caller, i) => drain(caller, nodes[i]!, key)));
    expect(retries.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(retries.map((r) => r.body.operation.id)).toEqual(ids);
    expect(await operationsWithKey(key)).toHaveLength(3);
    for (const nodeId of nodes) {
      expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining']);
    }
  });

  it('the same caller with the same key and another body is refused; another caller is not', async () => {
    const key = 'change-4712-drain';
    const [aNode, bNode] = [await nodeOf('acme'), await nodeOf('globex')];
    const first = await drain('acme', aNode, key);
    expect(first.status).toBe(202);
    const before = (await readNode(h, aNode)).version;

    const other = await drain('acme', aNode, key, 'another reason');
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const b = await drain('globex', bNode, key, 'another reason');
    expect(b.status).toBe(202);

    expect((await readNode(h, aNode)).version).toBe(before);
    expect((await eventsOf(h, aNode)).map((e) => e.type)).toEqual(['node.draining']);
    expect((await operationsWithKey(key)).map((op) => op.id).sort()).toEqual(
      [first.body.operation.id, b.body.operation.id].sort(),
    );
  });

  it('a key another tenant claimed first is still fresh for A, and A can retry it', async () => {
    const key = 'change-4713-drain';
    const [aNode, bNode] = [await nodeOf('acme'), await nodeOf('globex')];
    expect((await drain('globex', bNode, key)).status).toBe(202);
    const a = await drain('acme', aNode, key);
    expect(a.status).toBe(202);
    const again = await drain('acme', aNode, key);
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(a.body.operation.id);
    expect(await operationsWithKey(key)).toHaveLength(2);
  });

  it('two callers with one key on one node are two requests to its drain, not one update', async () => {
    // The owner's key and an operator's may both drain it: both drains go to workflow
    // drain/<node>, with the same key.
    await seedPool(h, { id: 'pool-shared', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-shared', tenantId: 'acme' });
    await allocate(h, nodeId, 'acme');
    const key = 'change-4714-drain';

    const a = await drain('acme', nodeId, key);
    expect(a.status).toBe(202);
    // B's begin is its own: it finds A's drain running (200); it is not handed A's answer (202).
    const b = await drain('operator', nodeId, key);
    expect(b.status).toBe(200);
    expect(b.body.operation.id).toBe(a.body.operation.id);
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining']);
    expect(await operationsWithKey(key)).toHaveLength(1);
  });
});

describe('twenty requests at once with one Idempotency-Key', () => {
  let n = 0;
  const fresh = async () => {
    n += 1;
    await seedPool(h, { id: `pool-race-${n}`, tenantId: 'acme' });
    return seedNode(h, { poolId: `pool-race-${n}`, tenantId: 'acme' });
  };
  it.each([
    ['drain', (nodeId: string) => ({ path: `/v1/nodes/${nodeId}/drain`, body: { reason: 'rack b7' } })],
    [
      'purge',
      (nodeId: string) => ({ path: `/v1/nodes/${nodeId}/purge`, body: { confirm: true, reason: 'rma' } }),
    ],
    [
      'remediation',
      (nodeId: string) => ({
        path: `/v1/nodes/${nodeId}/remediations`,
        body: { condition: 'GpuXidError', reason: 'xid 79' },
      }),
    ],
    ['pool drain', () => ({ path: `/v1/pools/pool-race-${n}/drain`, body: { reason: 'rack b7' } })],
  ])('%s: the first answers 202, every other the same operation (200)', async (_, request) => {
    const nodeId = await fresh();
    const { path, body } = request(nodeId);
    const key = `race-${n}-0000`;
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => call(h, 'POST', path, { headers: { 'idempotency-key': key }, body })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(19).fill(200), 202]);
    expect(new Set(replies.map((r) => r.body.operation.id)).size).toBe(1);
    expect(await operationsWithKey(key)).toHaveLength(1);
  });
});

import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { nodeCommands } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import { joinedNode } from '../support/agents';
import { call, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { longPollWaiting } from '../support/witnesses';

const h = useHarness({ worker: false });

async function enqueue(nodeId: string, action = 'reboot') {
  const id = newId('cmd');
  await h.db.transaction(async (tx) => {
    await tx.insert(nodeCommands).values({ id, nodeId, kind: 'remediate', action });
    await wakeNode(tx, nodeId);
  });
  return id;
}

describe('command stream', () => {
  it('a waiting long-poll gets a queued command at once; oldest first; ack and refuse are final', async () => {
    await seedPool(h, { id: 'pool-c', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-c');
    const started = Date.now();
    const waiting = call(h, 'GET', '/v1/agent/commands?wait=20', { token: credential });
    await longPollWaiting(h.deps.wakeups, nodeId);
    const first = await enqueue(nodeId, 'reset-accelerator');
    const delivered = await waiting;
    expect(delivered.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(delivered.body.items).toMatchObject([
      { id: first, kind: 'remediate', action: 'reset-accelerator' },
    ]);

    const second = await enqueue(nodeId, 'reboot');
    const both = await call(h, 'GET', '/v1/agent/commands?wait=0', { token: credential });
    expect(both.body.items.map((c: { id: string }) => c.id)).toEqual([first, second]);

    const acked = await call(h, 'POST', `/v1/agent/commands/${first}/ack`, { token: credential, body: {} });
    expect(acked.body).toMatchObject({ id: first, status: 'acked' });
    expect(
      (await call(h, 'POST', `/v1/agent/commands/${first}/ack`, { token: credential, body: {} })).status,
    ).toBe(200);
    const late = await call(h, 'POST', `/v1/agent/commands/${first}/refuse`, {
      token: credential,
      body: { reason: 'x' },
    });
    expect(late.status).toBe(409);
    const refused = await call(h, 'POST', `/v1/agent/commands/${second}/refuse`, {
      token: credential,
      body: { reason: 'no BMC' },
    });
    expect(refused.body.status).toBe('refused');
    const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, second));
    expect(row?.refuseReason).toBe('no BMC');
    expect((await call(h, 'GET', '/v1/agent/commands?wait=0', { token: credential })).body.items).toEqual([]);
    expect(
      (await call(h, 'POST', `/v1/agent/commands/${second}/refuse`, { token: credential, body: {} })).status,
    ).toBe(400);
  });

  it('commands queued while the node was away are delivered when it comes back', async () => {
    await seedPool(h, { id: 'pool-c', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-c');
    await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: { state: 'offline' } });
    const id = await enqueue(nodeId);
    await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: {} });
    expect(
      (await call(h, 'GET', '/v1/agent/commands?wait=1', { token: credential })).body.items,
    ).toMatchObject([{ id }]);
  });

  it("a node's credential cannot see or answer another node's commands", async () => {
    await seedPool(h, { id: 'pool-c', tenantId: 'acme' });
    const a = await joinedNode(h, 'pool-c');
    const b = await joinedNode(h, 'pool-c');
    const id = await enqueue(b.nodeId);
    expect((await call(h, 'GET', '/v1/agent/commands?wait=0', { token: a.credential })).body.items).toEqual(
      [],
    );
    expect(
      (await call(h, 'POST', `/v1/agent/commands/${id}/ack`, { token: a.credential, body: {} })).status,
    ).toBe(404);
    const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id));
    expect(row?.status).toBe('pending');
    expect((await call(h, 'GET', '/v1/agent/commands?wait=61', { token: a.credential })).status).toBe(400);
    expect(
      (await call(h, 'POST', '/v1/agent/commands/cmd_1/ack', { token: a.credential, body: {} })).status,
    ).toBe(400);
  });
});

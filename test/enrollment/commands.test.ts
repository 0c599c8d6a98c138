import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { nodeCommands } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import { answerCommand, heartbeat, joinedPoolNode, pollCommands } from '../support/builders';
import { joinedNode } from '../support/agents';
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
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-c');
    const started = Date.now();
    const waiting = pollCommands(h, credential, 20);
    await longPollWaiting(h.deps.wakeups, nodeId);
    const first = await enqueue(nodeId, 'reset-accelerator');
    const delivered = await waiting;
    expect(delivered.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(delivered.body.items).toMatchObject([
      { id: first, kind: 'remediate', action: 'reset-accelerator' },
    ]);

    const second = await enqueue(nodeId, 'reboot');
    const both = await pollCommands(h, credential);
    expect(both.body.items.map((c: { id: string }) => c.id)).toEqual([first, second]);

    const acked = await answerCommand(h, credential, first);
    expect(acked.body).toMatchObject({ id: first, status: 'acked' });
    expect((await answerCommand(h, credential, first)).status).toBe(200);
    const late = await answerCommand(h, credential, first, 'refuse', { reason: 'x' });
    expect(late.status).toBe(409);
    const refused = await answerCommand(h, credential, second, 'refuse', { reason: 'no BMC' });
    expect(refused.body.status).toBe('refused');
    const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, second));
    expect(row?.refuseReason).toBe('no BMC');
    expect((await pollCommands(h, credential)).body.items).toEqual([]);
    expect((await answerCommand(h, credential, second, 'refuse')).status).toBe(400);
  });

  it('commands queued while the node was away are delivered when it comes back', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-c');
    await heartbeat(h, credential, 'offline');
    const id = await enqueue(nodeId);
    await heartbeat(h, credential);
    expect((await pollCommands(h, credential, 1)).body.items).toMatchObject([{ id }]);
  });

  it("a node's credential cannot see or answer another node's commands", async () => {
    const a = await joinedPoolNode(h, 'pool-c');
    const b = await joinedNode(h, 'pool-c');
    const id = await enqueue(b.nodeId);
    expect((await pollCommands(h, a.credential)).body.items).toEqual([]);
    expect((await answerCommand(h, a.credential, id)).status).toBe(404);
    const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id));
    expect(row?.status).toBe('pending');
    expect((await pollCommands(h, a.credential, 61)).status).toBe(400);
    expect((await answerCommand(h, a.credential, 'cmd_1')).status).toBe(400);
  });
});

import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { disruptions } from '../db/schema';
import { drainWorkflowId, purgeWorkflowId } from '../workflows/definitions';
import { joinedNode } from './support/agents';
import { answerCommand, drainProgress, operationWhen, pollCommands, purge } from './support/builders';
import { decommissioned, executeFromPreview, retiredNode } from './support/decommission';
import { allocate, call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();

/** Well under a waiting drain's periodic look (at most 5 minutes): only a wake-up explains it. */
const WOKEN_WITHIN_MS = 5_000;

const progressOf = (nodeId: string) => drainProgress(h, nodeId);

async function disruptionOf(nodeId: string) {
  const [row] = await h.db.select().from(disruptions).where(eq(disruptions.nodeId, nodeId));
  return row?.state;
}

/**
 * The pool's only slot held by `holder` (drained, so it stays out until it leaves), and a drain of
 * another node past its deadline waiting for that slot; that node's id.
 */
async function waitingBehind(poolId: string, holder: string): Promise<string> {
  expect((await call(h, 'POST', `/v1/nodes/${holder}/drain`, { body: {} })).status).toBe(202);
  await eventually(async () => ((await eventsOf(h, holder, 'node.drained')).length === 1 ? true : undefined));
  expect(await disruptionOf(holder)).toBe('holding');
  const waiter = await seedNode(h, { poolId, tenantId: 'acme' });
  await allocate(h, waiter, 'acme');
  await call(h, 'POST', `/v1/nodes/${waiter}/drain`, { body: { deadline: '0s' } });
  const waiting = await eventually(async () => {
    const p = await progressOf(waiter);
    return p?.phase === 'waiting-for-budget' ? p : undefined;
  });
  expect(waiting.waitingFor?.budget).toEqual({ max: 1, used: 1, holders: [holder] });
  // Its own next look is far off: going sooner than that takes a wake-up.
  expect(Date.parse(waiting.nextCheckAt!) - Date.now()).toBeGreaterThan(WOKEN_WITHIN_MS * 2);
  expect(await disruptionOf(waiter)).toBe('waiting');
  return waiter;
}

/** The waiting drain takes the freed slot, releases by force and drains, soon after `freedAt`. */
async function proceedsSoonAfter(waiter: string, freedAt: number) {
  await eventually(
    async () => ((await eventsOf(h, waiter, 'node.drained')).length === 1 ? true : undefined),
    WOKEN_WITHIN_MS,
    20,
  );
  expect(Date.now() - freedAt).toBeLessThan(WOKEN_WITHIN_MS);
  expect(await eventsOf(h, waiter, 'allocation.force-released')).toHaveLength(1);
  expect(await disruptionOf(waiter)).toBe('holding');
  expect(await h.temporal.workflow.getHandle(drainWorkflowId(waiter)).result()).toBe('drained');
}

describe('a budget slot freed by a workflow wakes the waiting drains', () => {
  it('a purge that forgets the holder', async () => {
    await seedPool(h, { id: 'pool-bf1', tenantId: 'acme', policy: { maxUnavailable: 1 } });
    const { nodeId: holder, credential } = await joinedNode(h, 'pool-bf1');
    const waiter = await waitingBehind('pool-bf1', holder);

    expect((await purge(h, holder)).status).toBe(202);
    // Purging, it is still out of service: the slot stays held until the node is forgotten.
    const [command] = (await pollCommands(h, credential)).body.items;
    expect(await disruptionOf(holder)).toBe('holding');
    expect((await progressOf(waiter))?.phase).toBe('waiting-for-budget');

    const freedAt = Date.now();
    expect((await answerCommand(h, credential, command.id)).status).toBe(200);
    await proceedsSoonAfter(waiter, freedAt);
    expect(await disruptionOf(holder)).toBeUndefined();
    expect(await eventsOf(h, holder, 'node.purged')).toHaveLength(1);
  });

  it('a cancellation that finds the purge acknowledged and forgets the holder', async () => {
    await seedPool(h, { id: 'pool-bf3', tenantId: 'acme', policy: { maxUnavailable: 1 } });
    const { nodeId: holder, credential } = await joinedNode(h, 'pool-bf3');
    const waiter = await waitingBehind('pool-bf3', holder);
    const started = await purge(h, holder);
    const opId = started.body.operation.id;
    const [command] = (await pollCommands(h, credential)).body.items;
    // Its workflow (begun: its first look ran) gone before the ack reached it: only the DELETE's
    // own clean-up forgets the node.
    await operationWhen(h, opId);
    await h.temporal.workflow.getHandle(purgeWorkflowId(holder)).terminate('gone before the ack');
    expect((await answerCommand(h, credential, command.id)).status).toBe(200);
    expect(await disruptionOf(holder)).toBe('holding');
    expect((await call(h, 'GET', `/v1/operations/${opId}`)).body.status).toBe('running');

    const freedAt = Date.now();
    const cancelled = await call(h, 'DELETE', `/v1/operations/${opId}`);
    // Past cancelling: the purge succeeded, the node forgotten.
    expect(cancelled.status).toBe(409);
    expect(cancelled.body.error).toMatchObject({ code: 'INVALID_STATE' });
    expect((await call(h, 'GET', `/v1/operations/${opId}`)).body.status).toBe('succeeded');
    expect((await call(h, 'GET', `/v1/nodes/${holder}`)).body.deletedAt).toEqual(expect.any(String));
    await proceedsSoonAfter(waiter, freedAt);
    expect(await disruptionOf(holder)).toBeUndefined();
    expect(await eventsOf(h, holder, 'node.purged')).toHaveLength(1);
  });

  it("a pool's maxUnavailable raised: room for the waiting drain while the holder stays out", async () => {
    await seedPool(h, { id: 'pool-bf4', tenantId: 'acme', policy: { maxUnavailable: 1 } });
    const holder = await seedNode(h, { poolId: 'pool-bf4', tenantId: 'acme' });
    const waiter = await waitingBehind('pool-bf4', holder);

    const freedAt = Date.now();
    const raised = await call(h, 'PATCH', '/v1/pools/pool-bf4', {
      body: { policy: { maxUnavailable: 2 }, reason: 'two at once for the roll-out' },
      headers: { 'if-match': '1' },
    });
    expect(raised.status).toBe(200);
    await proceedsSoonAfter(waiter, freedAt);
    // The holder kept its slot: the second one went to the waiter.
    expect(await disruptionOf(holder)).toBe('holding');
  });

  it('a decommission that takes the holder out for good', async () => {
    await seedPool(h, { id: 'pool-bf2', tenantId: 'acme', policy: { maxUnavailable: 1 } });
    const { nodeId: holder } = await retiredNode(h, 'pool-bf2');
    const waiter = await waitingBehind('pool-bf2', holder);

    const freedAt = Date.now();
    const { reply } = await executeFromPreview(h, holder);
    expect(reply.status).toBe(202);
    expect(await decommissioned(h, holder, reply.body.id)).toBe('decommissioned');
    await proceedsSoonAfter(waiter, freedAt);
    expect(await disruptionOf(holder)).toBeUndefined();
    expect(await eventsOf(h, holder, 'node.decommissioned')).toHaveLength(1);
  });
});

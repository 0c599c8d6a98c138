import { eq, sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { joinTokens, nodes } from '../../db/schema';
import { createToken, join } from '../support/agents';
import { call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

/**
 * The database fails the moment acceptance writes `node.adopted`, as a server going away would
 * (57P01, a transient error): the step before it (adopt's `adopting`, approve's `node.approved`,
 * a join's new node) must not stay committed without its acceptance.
 */
async function failAcceptance(): Promise<void> {
  await h.db.execute(sql`
    create or replace function fail_acceptance() returns trigger language plpgsql as $$
    begin
      raise exception 'the server went away' using errcode = '57P01';
    end $$`);
  await h.db.execute(sql`
    create trigger fail_acceptance before insert on events
    for each row when (new.type = 'node.adopted') execute function fail_acceptance()`);
}

afterEach(async () => {
  await h.db.execute(sql`drop trigger if exists fail_acceptance on events`);
});

describe('a step and its acceptance commit together', () => {
  it('adopt: a failure in acceptance leaves the node adopted as it was, and a retry adopts it', async () => {
    await seedPool(h, { id: 'pool-a', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-a', tenantId: 'acme' });
    await failAcceptance();
    const failed = await call(h, 'POST', `/v1/nodes/${id}/adopt`, { body: { reason: 'new firmware' } });
    expect(failed.status).toBe(503);
    expect(failed.body.error.code).toBe('UNAVAILABLE');
    expect((await call(h, 'GET', `/v1/nodes/${id}`)).body).toMatchObject({
      provisionState: 'adopted',
      version: 1,
    });
    expect(await eventsOf(h, id)).toEqual([]);

    await h.db.execute(sql`drop trigger fail_acceptance on events`);
    const retried = await call(h, 'POST', `/v1/nodes/${id}/adopt`, { body: { reason: 'new firmware' } });
    expect(retried.body).toMatchObject({ provisionState: 'adopted', version: 3 });
    expect((await eventsOf(h, id)).map((e) => e.type)).toEqual(['node.adopting', 'node.adopted']);
  });

  it('approve: a failure in acceptance leaves the node pending, and a retry approves it', async () => {
    await seedPool(h, { id: 'pool-p', tenantId: 'acme' });
    const pending = await join(h, { hostname: 'laptop-1', poolId: 'pool-p' });
    const id = pending.body.nodeId as string;
    await failAcceptance();
    const failed = await call(h, 'POST', `/v1/nodes/${id}/approve`, { body: {} });
    expect(failed.status).toBe(503);
    expect((await call(h, 'GET', `/v1/nodes/${id}`)).body).toMatchObject({
      provisionState: 'pending',
      poolId: null,
    });
    expect(await eventsOf(h, id)).toEqual([]);

    await h.db.execute(sql`drop trigger fail_acceptance on events`);
    const approved = await call(h, 'POST', `/v1/nodes/${id}/approve`, { body: {} });
    expect(approved.body).toMatchObject({ provisionState: 'adopted', poolId: 'pool-p' });
    expect((await eventsOf(h, id)).map((e) => e.type)).toEqual(['node.approved', 'node.adopted']);
  });

  it('join with a token: a failure in acceptance leaves no node behind and the token unspent', async () => {
    await seedPool(h, { id: 'pool-j', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-j', maxUses: 1 });
    await failAcceptance();
    const failed = await join(h, { token: token.secret, hostname: 'gpu-j-01' });
    expect(failed.status).toBe(503);
    expect(await h.db.select().from(nodes).where(eq(nodes.hostname, 'gpu-j-01'))).toEqual([]);
    const [spent] = await h.db.select().from(joinTokens).where(eq(joinTokens.id, token.id));
    expect(spent!.uses).toBe(0);

    await h.db.execute(sql`drop trigger fail_acceptance on events`);
    const joined = await join(h, { token: token.secret, hostname: 'gpu-j-01' });
    expect(joined.body.provisionState).toBe('adopted');
  });
});

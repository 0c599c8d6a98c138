import { describe, expect, it } from 'vitest';
import { People } from '../../api/people';
import { appendEvent } from '../../db/events';
import { events } from '../../db/schema';
import { seedPoolNode } from '../support/builders';
import { call, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness({ worker: false });

interface Entry {
  id: string;
  nodeId: string | null;
  hostname: string | null;
  poolId: string | null;
  type: string;
  description: string | null;
  actor: string;
  reason: string | null;
  operationId: string | null;
  createdAt: string;
  person: { issuer: string; subject: string; email: string | null } | null;
}
type Page = { items: Entry[]; nextCursor: string | null };

const audit = async (query: string) => {
  const reply = await call<Page>(h, 'GET', `/v1/audit?${query}`);
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body;
};
/** Appends an event as `actor` did it, as a change does (in a transaction, with its NOTIFY). */
const record = (
  actor: string,
  nodeId: string | null,
  type: 'node.cordoned' | 'node.drained',
  reason: string,
) => h.db.transaction((tx) => appendEvent(tx, { type, nodeId, actor, reason }));
/** A unique person per test, so each test reads only its own entries. */
let people = 0;
const person = () => `p${++people}-${Date.now()}@example.com`;

describe('GET /v1/audit', () => {
  it("names who did what to which node, newest first, by a person's email or the exact actor", async () => {
    const node = await seedPoolNode(h, 'pool-b7');
    const alice = person();
    await record(`user:${alice}`, node, 'node.cordoned', 'rack b7 PSU swap');
    await record('key:someone-else', node, 'node.cordoned', 'not hers');
    await record(`user:${alice}`, node, 'node.drained', 'rack b7 PSU swap, drained');

    const page = await audit(`actor=${encodeURIComponent(alice)}`);
    expect(page.nextCursor).toBeNull();
    expect(page.items.map((e) => [e.type, e.reason])).toEqual([
      ['node.drained', 'rack b7 PSU swap, drained'],
      ['node.cordoned', 'rack b7 PSU swap'],
    ]);
    const hostname = (await call(h, 'GET', `/v1/nodes/${node}`)).body.hostname;
    expect(page.items[0]).toMatchObject({
      nodeId: node,
      hostname,
      poolId: 'pool-b7',
      actor: `user:${alice}`,
      description: expect.stringMatching(/\S/),
    });
    // The exact actor string is the same filter; the type prefix narrows it.
    expect(await audit(`actor=${encodeURIComponent(`user:${alice}`)}`)).toEqual(page);
    expect(
      (await audit(`actor=${encodeURIComponent(alice)}&type=node.cordon`)).items.map((e) => e.type),
    ).toEqual(['node.cordoned']);
    // Not a prefix match: another person whose address starts the same is not her.
    expect((await audit(`actor=${encodeURIComponent(alice.slice(0, -4))}`)).items).toEqual([]);
  });

  it("names the provider identity behind a person's email as it was at the time, and none for a key", async () => {
    const email = person();
    const actor = `user:${email}`;
    const issuer = 'https://idp.example.com';
    // As the API records sign-ins (api/people.ts): the email was subject s-1's, then the provider
    // gave it to a new person, s-2.
    await new People(h.db).seen({ issuer, subject: 's-1', actor, email }, Date.parse('2026-01-01T00:00:00Z'));
    await new People(h.db).seen({ issuer, subject: 's-2', actor, email }, Date.parse('2026-02-01T00:00:00Z'));
    const at = (iso: string, who = actor) => ({
      type: 'node.cordoned',
      actor: who,
      reason: iso,
      createdAt: new Date(iso),
    });
    await h.db
      .insert(events)
      .values([
        at('2026-01-15T00:00:00Z'),
        at('2026-02-15T00:00:00Z'),
        at('2026-02-16T00:00:00Z', 'key:ops'),
      ]);
    const page = await audit(`actor=${encodeURIComponent(actor)}`);
    expect(page.items.map((e) => [e.reason, e.person?.subject])).toEqual([
      ['2026-02-15T00:00:00Z', 's-2'],
      ['2026-01-15T00:00:00Z', 's-1'],
    ]);
    expect(page.items[0]!.person).toEqual({ issuer, subject: 's-2', email });
    const keys = await audit('actor=key:ops&since=2026-02-16T00:00:00Z&until=2026-02-17T00:00:00Z');
    expect(keys.items.map((e) => e.person)).toEqual([null]);
  });

  it('keeps the entries from since and before until', async () => {
    const actor = `user:${person()}`;
    const at = (iso: string) => ({ type: 'node.cordoned', actor, reason: iso, createdAt: new Date(iso) });
    await h.db
      .insert(events)
      .values([at('2026-01-01T03:00:00Z'), at('2026-01-01T03:12:00Z'), at('2026-01-01T04:00:00Z')]);
    const q = `actor=${encodeURIComponent(actor)}`;
    const reasons = async (more: string) => (await audit(`${q}&${more}`)).items.map((e) => e.reason);
    expect(await reasons('since=2026-01-01T03:12:00Z')).toEqual([
      '2026-01-01T04:00:00Z',
      '2026-01-01T03:12:00Z',
    ]);
    expect(await reasons('until=2026-01-01T04:00:00Z')).toEqual([
      '2026-01-01T03:12:00Z',
      '2026-01-01T03:00:00Z',
    ]);
    expect(await reasons('since=2026-01-01T05:12:00%2B02:00&until=2026-01-01T03:30:00Z')).toEqual([
      '2026-01-01T03:12:00Z',
    ]);
  });

  it('pages back with the cursor, each entry once, and ends with a null cursor', async () => {
    const actor = `user:${person()}`;
    for (let i = 0; i < 5; i++) await record(actor, null, 'node.cordoned', `r${i}`);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 5; pages++) {
      const page = await audit(
        `actor=${encodeURIComponent(actor)}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...page.items.map((e) => e.reason!));
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual(['r4', 'r3', 'r2', 'r1', 'r0']);
    expect(cursor).toBeNull();
  });

  it('follows oldest first after a cursor, and a long-poll wakes when a matching entry commits', async () => {
    const actor = `user:${person()}`;
    await record(actor, null, 'node.cordoned', 'before');
    const q = `actor=${encodeURIComponent(actor)}`;
    const from0 = await audit(`${q}&after=0`);
    expect(from0.items.map((e) => e.reason)).toEqual(['before']);
    const began = Date.now();
    const polled = audit(`${q}&after=${from0.nextCursor}&wait=20`);
    await eventually(async () => h.deps.feedWakeups.waiting('') > 0);
    await record('key:not-followed', null, 'node.cordoned', 'other');
    await record(actor, null, 'node.drained', 'new');
    const page = await polled;
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(page.items.map((e) => [e.type, e.reason])).toEqual([['node.drained', 'new']]);
    expect(Number(page.nextCursor)).toBe(Number(page.items[0]!.id));
  });

  it('is for operators: a tenant key, even one that reads every node, gets 403 in the envelope', async () => {
    const reader = await tenantKey(h, 'tenant-a', ['compute:nodes:read']);
    const reply = await call(h, 'GET', '/v1/audit', { token: reader.secret });
    expect(reply.status).toBe(403);
    expect(reply.body.error).toMatchObject({ code: 'FORBIDDEN', requestId: expect.any(String) });
  });

  it('refuses bad query values with 400 INVALID_INPUT', async () => {
    for (const query of [
      'since=yesterday',
      'until=2026-01-01',
      'cursor=abc',
      'after=-1',
      'limit=201',
      'wait=31',
      'type=Node.',
      'actor=a%20b',
      'actor=a%00b',
      'actor=a%E2%80%AEb',
      'cursor=5&after=5',
      'wait=5',
      'nodeId=n_x',
    ]) {
      const reply = await call(h, 'GET', `/v1/audit?${query}`);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.code, query).toBe('INVALID_INPUT');
    }
  });
});

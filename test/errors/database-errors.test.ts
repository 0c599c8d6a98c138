import { ApplicationFailure } from '@temporalio/common';
import { eq, sql } from 'drizzle-orm';
import { Hono } from 'hono';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../../activities';
import { toResponse } from '../../api/errors';
import { createDb } from '../../db/client';
import { classifyDatabaseError } from '../../db/errors';
import { requestDrain } from '../../db/requests/drain';
import { events, nodeCommands, nodes, operations, pools } from '../../db/schema';
import { newId } from '../../domain/ids';
import { seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

// Nothing here needs a workflow: the activities are called as the worker would call them.
const h = useHarness({ worker: false });

/** The error a statement fails with (it must fail). */
async function failureOf(statement: PromiseLike<unknown>): Promise<unknown> {
  try {
    await statement;
  } catch (error) {
    return error;
  }
  throw new Error('the statement succeeded');
}

/** What a request meeting `error` answers, through the API's one error mapper. */
async function answerTo(error: unknown) {
  const app = new Hono().onError(toResponse);
  app.get('/', () => {
    throw error;
  });
  const response = await app.request('/');
  return { status: response.status, body: (await response.json()) as any };
}

const refusal = (code: string) => expect.objectContaining({ code });

describe('database errors are classified once, by SQLSTATE', () => {
  it('invalid text, numbers and dates (class 22) are INVALID_INPUT', async () => {
    await seedPool(h, { id: 'pool-e1' });
    const nodeId = await seedNode(h, { poolId: 'pool-e1' });
    const event = { nodeId, type: 'test', actor: 'test' };
    const cases = [
      // NUL in a text column, and in jsonb (where it is an unsupported escape)
      h.db.insert(events).values({ ...event, reason: 'a\u0000b' }),
      h.db.insert(events).values({ ...event, data: { note: 'a\u0000b' } }),
      // a lone surrogate cannot be stored in jsonb either
      h.db.insert(events).values({ ...event, data: { note: '\ud800' } }),
      h.db
        .update(nodes)
        .set({ version: 2 ** 31 })
        .where(eq(nodes.id, nodeId)),
      h.db.execute(sql`update nodes set updated_at = 'yesterday-ish' where id = ${nodeId}`),
    ];
    for (const statement of cases) {
      expect(classifyDatabaseError(await failureOf(statement))).toEqual(refusal('INVALID_INPUT'));
    }
    expect(await h.db.select().from(events).where(eq(events.nodeId, nodeId))).toEqual([]);
  });

  it('integrity violations (class 23): collisions are CONFLICT, impossible values INVALID_INPUT', async () => {
    await seedPool(h, { id: 'pool-e2' });
    const nodeId = await seedNode(h, { poolId: 'pool-e2' });
    const unique = await failureOf(
      h.db.insert(pools).values({ id: 'pool-e2', kind: 'provider', siteId: 'x' }),
    );
    expect(classifyDatabaseError(unique)).toEqual(refusal('CONFLICT'));
    const foreign = await failureOf(
      h.db.insert(nodeCommands).values({ id: newId('cmd'), nodeId: 'node_gone', kind: 'remediate' }),
    );
    expect(classifyDatabaseError(foreign)).toEqual(refusal('CONFLICT'));
    const notNull = await failureOf(h.db.execute(sql`insert into pools (id, kind) values ('p', 'provider')`));
    expect(classifyDatabaseError(notNull)).toEqual(refusal('INVALID_INPUT'));
    const check = await failureOf(h.db.update(nodes).set({ version: 0 }).where(eq(nodes.id, nodeId)));
    expect(classifyDatabaseError(check)).toEqual(refusal('INVALID_INPUT'));
  });

  it('the decommissioned-nodes invariant guards a state, not a value: INVALID_STATE', async () => {
    await seedPool(h, { id: 'pool-e3' });
    const nodeId = await seedNode(h, { poolId: 'pool-e3', provisionState: 'decommissioned' });
    const moved = await failureOf(h.db.update(nodes).set({ cordoned: true }).where(eq(nodes.id, nodeId)));
    expect(classifyDatabaseError(moved)).toEqual(refusal('INVALID_STATE'));
  });

  it('lost races, a lost connection and an unreachable database are transient', async () => {
    for (const state of ['40001', '40P01', '55P03']) {
      const raised = await failureOf(
        h.db.execute(sql.raw(`do $$ begin raise exception 'lost a race' using errcode = '${state}'; end $$`)),
      );
      expect(classifyDatabaseError(raised)).toBe('transient');
    }
    const session = postgres(h.databaseUrl, { max: 1, onnotice: () => {} });
    const terminated = await failureOf(session`select pg_terminate_backend(pg_backend_pid())`);
    // The terminated session has nothing left to finish: do not wait for it.
    await session.end({ timeout: 0 });
    expect(classifyDatabaseError(terminated)).toBe('transient');
    const nowhere = createDb('postgres://postgres@127.0.0.1:1/nowhere', { max: 1 });
    const refused = await failureOf(nowhere.db.execute(sql`select 1`));
    await nowhere.close();
    expect(classifyDatabaseError(refused)).toBe('transient');
    expect(classifyDatabaseError(new TypeError('a bug'))).toBeNull();
  });

  it('the API answers them with their code, and a transient one as UNAVAILABLE with nothing inside', async () => {
    const nul = await failureOf(h.db.insert(events).values({ type: 't', actor: 'a', reason: '\u0000' }));
    expect(await answerTo(nul)).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_INPUT', details: {} } },
    });
    const unique = await failureOf(
      h.db.insert(pools).values({ id: 'pool-e1', kind: 'provider', siteId: 'x' }),
    );
    expect(await answerTo(unique)).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } });
    const nowhere = createDb('postgres://postgres@127.0.0.1:1/nowhere', { max: 1 });
    const refused = await failureOf(nowhere.db.execute(sql`select 1`));
    await nowhere.close();
    const answer = await answerTo(refused);
    expect(answer).toMatchObject({ status: 503, body: { error: { code: 'UNAVAILABLE', details: {} } } });
    expect(JSON.stringify(answer.body)).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|:1\b/);
  });
});

describe('an activity meeting a database refusal gives up at once', () => {
  it('a step that writes a NUL: non-retryable INVALID_INPUT, and nothing changed', async () => {
    await seedPool(h, { id: 'pool-e4' });
    const nodeId = await seedNode(h, { poolId: 'pool-e4' });
    const { operation } = await h.db.transaction((tx) =>
      requestDrain(tx, nodeId, { actor: 'test', reason: 'replace PSU', deadline: null }),
    );
    const [before] = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
    const activities = createActivities({ db: h.db, temporal: h.temporal });
    const failure = await failureOf(
      activities.failOperation({
        nodeId,
        operationId: operation.id,
        failure: { code: 'INTERNAL', reason: 'broken\u0000', step: 'lookAtDrain' },
      }),
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'INVALID_INPUT', nonRetryable: true });
    const [node] = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
    expect(node).toMatchObject({ version: before!.version, cordoned: true, noScheduleReasons: ['draining'] });
    const [op] = await h.db.select().from(operations).where(eq(operations.id, operation.id));
    expect(op).toMatchObject({ status: 'pending', error: null });
    expect((await h.db.select().from(events).where(eq(events.nodeId, nodeId))).map((e) => e.type)).toEqual([
      'node.draining',
    ]);
  });

  it('a refusal of its own keeps its code; a lost database is left to retry', async () => {
    const activities = createActivities({ db: h.db, temporal: h.temporal });
    const missing = await failureOf(activities.lookAtDrain({ nodeId: 'node_missing', operationId: 'op_x' }));
    expect(missing).toMatchObject({ type: 'NOT_FOUND', nonRetryable: true });
    const nowhere = createDb('postgres://postgres@127.0.0.1:1/nowhere', { max: 1 });
    const offline = createActivities({ db: nowhere.db, temporal: h.temporal });
    const lost = await failureOf(offline.lookAtPurge({ nodeId: 'node_x', operationId: 'op_x' }));
    await nowhere.close();
    expect(lost).not.toBeInstanceOf(ApplicationFailure);
    expect(classifyDatabaseError(lost)).toBe('transient');
  });
});

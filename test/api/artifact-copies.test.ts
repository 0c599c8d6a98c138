import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { artifactCopies } from '../../db/schema';
import { seedPoolNode, setNode } from '../support/builders';
import { call, eventsOf, seedNode, seedPool, tenantKey, type Reply } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { snapshot } from '../support/snapshot';

const h = useHarness({ worker: false });

const copyPath = (nodeId: string, artifactId: string) => `/v1/nodes/${nodeId}/artifact-copies/${artifactId}`;

function record(nodeId: string, artifactId: string, body: unknown, token?: string): Promise<Reply> {
  return call(h, 'PUT', copyPath(nodeId, artifactId), { body, token });
}

function remove(nodeId: string, artifactId: string, body?: unknown, token?: string): Promise<Reply> {
  return call(h, 'DELETE', copyPath(nodeId, artifactId), { body, token });
}

const artifactEvents = (nodeId: string) => eventsOf(h, nodeId, 'artifact.');

describe('artifact copies: recording and removing', () => {
  it('records a copy with one event; the same again changes nothing and writes no event; another path moves it', async () => {
    const nodeId = await seedPoolNode(h, 'pool-rec');
    const first = await record(nodeId, 'llama-3.1-70b', { path: '/data/models/llama', reason: 'synced' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^art_/),
      artifactId: 'llama-3.1-70b',
      nodeId,
      path: '/data/models/llama',
      createdAt: expect.any(String),
      removedAt: null,
    });
    expect(await artifactEvents(nodeId)).toEqual([
      expect.objectContaining({
        type: 'artifact.copy.recorded',
        actor: 'key:bootstrap-operator',
        reason: 'synced',
        data: { copyId: first.body.id, artifactId: 'llama-3.1-70b', path: '/data/models/llama' },
      }),
    ]);

    const before = await snapshot(h);
    const again = await record(nodeId, 'llama-3.1-70b', {
      path: '/data/models/llama',
      reason: 'synced again',
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await snapshot(h)).toEqual(before);

    const moved = await record(nodeId, 'llama-3.1-70b', { path: '/data2/llama' });
    expect(moved.status).toBe(201);
    expect(moved.body).toMatchObject({ path: '/data2/llama', removedAt: null });
    const events = await artifactEvents(nodeId);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({
      type: 'artifact.copy.recorded',
      reason: null,
      data: { copyId: moved.body.id, path: '/data2/llama', previousPath: '/data/models/llama' },
    });
    // One live copy per node and artifact: the first place is removed.
    const listed = await call(h, 'GET', `/v1/nodes/${nodeId}/artifact-copies`);
    expect(listed.body).toEqual({ items: [moved.body], nextCursor: null });
  });

  it('removes a copy with one event; removing it again answers it unchanged; one never recorded is 404', async () => {
    const nodeId = await seedPoolNode(h, 'pool-rm');
    const recorded = await record(nodeId, 'dataset-a', { path: '/data/a' });
    const removed = await remove(nodeId, 'dataset-a', { reason: 'evicted' });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ ...recorded.body, removedAt: expect.any(String) });
    expect((await artifactEvents(nodeId)).at(-1)).toMatchObject({
      type: 'artifact.copy.removed',
      reason: 'evicted',
      data: { copyId: recorded.body.id, artifactId: 'dataset-a', path: '/data/a' },
    });

    const before = await snapshot(h);
    const removedAgain = await remove(nodeId, 'dataset-a');
    expect(removedAgain.status).toBe(200);
    expect(removedAgain.body).toEqual(removed.body);
    const never = await remove(nodeId, 'dataset-never');
    expect(never.status).toBe(404);
    expect(never.body.error).toMatchObject({
      code: 'NOT_FOUND',
      details: { nodeId, artifactId: 'dataset-never' },
    });
    expect(await snapshot(h)).toEqual(before);

    // The place recorded again is live again, with one more event.
    const back = await record(nodeId, 'dataset-a', { path: '/data/a' });
    expect(back.status).toBe(201);
    expect(back.body).toMatchObject({ id: recorded.body.id, removedAt: null });
    expect((await artifactEvents(nodeId)).map((e) => e.type)).toEqual([
      'artifact.copy.recorded',
      'artifact.copy.removed',
      'artifact.copy.recorded',
    ]);
  });

  it('a deleted, purging, decommissioning or decommissioned node takes no new copy (409); a copy there can still be removed', async () => {
    await seedPool(h, { id: 'pool-gone', tenantId: 'acme' });
    const deleted = await seedNode(h, { poolId: 'pool-gone', tenantId: 'acme' });
    await record(deleted, 'kept-a', { path: '/data/a' });
    await setNode(h, deleted, { deletedAt: new Date() });
    const leaving = await Promise.all(
      (['purging', 'decommissioning', 'decommissioned'] as const).map(async (provisionState) => {
        const id = await seedNode(h, { poolId: 'pool-gone', tenantId: 'acme', provisionState });
        return [id, provisionState] as const;
      }),
    );
    const before = await snapshot(h);
    for (const [nodeId, state] of [[deleted, 'deleted'], ...leaving] as const) {
      const refused = await record(nodeId, 'weights-new', { path: '/data/w' });
      expect(refused.status, state).toBe(409);
      expect(refused.body.error.code, state).toBe('INVALID_STATE');
      expect(refused.body.error.message, state).toContain(`the node is ${state}`);
    }
    expect(await snapshot(h)).toEqual(before);
    expect((await remove(deleted, 'kept-a')).body.removedAt).toEqual(expect.any(String));
  });
});

describe('artifact copies: listings', () => {
  it("lists a node's live copies by artifact id, page by page", async () => {
    const nodeId = await seedPoolNode(h, 'pool-list');
    for (const artifactId of ['c-weights', 'a-weights', 'b-weights', 'd-weights']) {
      expect((await record(nodeId, artifactId, { path: `/data/${artifactId}` })).status).toBe(201);
    }
    await remove(nodeId, 'd-weights');
    const first = await call(h, 'GET', `/v1/nodes/${nodeId}/artifact-copies?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.items.map((c: { artifactId: string }) => c.artifactId)).toEqual([
      'a-weights',
      'b-weights',
    ]);
    const second = await call(
      h,
      'GET',
      `/v1/nodes/${nodeId}/artifact-copies?limit=2&cursor=${first.body.nextCursor}`,
    );
    expect(second.body).toEqual({
      items: [expect.objectContaining({ artifactId: 'c-weights', nodeId, path: '/data/c-weights' })],
      nextCursor: null,
    });
    const missing = await call(h, 'GET', `/v1/nodes/${newId('node')}/artifact-copies`);
    expect(missing.status).toBe(404);
  });

  it("lists an artifact's live copies by node id, only on the nodes the caller sees", async () => {
    await seedPool(h, { id: 'pool-mine', tenantId: 'hooli' });
    await seedPool(h, { id: 'pool-theirs', tenantId: 'globex' });
    const mine = [
      await seedNode(h, { poolId: 'pool-mine', tenantId: 'hooli' }),
      await seedNode(h, { poolId: 'pool-mine', tenantId: 'hooli' }),
    ];
    const theirs = await seedNode(h, { poolId: 'pool-theirs', tenantId: 'globex' });
    const gone = await seedNode(h, { poolId: 'pool-mine', tenantId: 'hooli' });
    for (const nodeId of [...mine, theirs, gone]) await record(nodeId, 'shared-set', { path: '/data/s' });
    await remove(gone, 'shared-set');
    await record(mine[0]!, 'other-set', { path: '/data/o' });

    const operator = await call(h, 'GET', '/v1/artifacts/shared-set/copies');
    expect(operator.body.items.map((c: { nodeId: string }) => c.nodeId)).toEqual([...mine, theirs].sort());
    const paged = await call(h, 'GET', '/v1/artifacts/shared-set/copies?limit=1');
    expect(paged.body.items).toHaveLength(1);
    const rest = await call(h, 'GET', `/v1/artifacts/shared-set/copies?cursor=${paged.body.nextCursor}`);
    expect([...paged.body.items, ...rest.body.items]).toEqual(operator.body.items);

    const reader = await tenantKey(h, 'hooli', ['compute:nodes:read'], 'hooli-copies');
    const seen = await call(h, 'GET', '/v1/artifacts/shared-set/copies', { token: reader.secret });
    expect(seen.status).toBe(200);
    expect(seen.body.items.map((c: { nodeId: string }) => c.nodeId)).toEqual([...mine].sort());
    const nothing = await call(h, 'GET', '/v1/artifacts/no-such-set/copies', { token: reader.secret });
    expect(nothing.body).toEqual({ items: [], nextCursor: null });
    const hidden = await call(h, 'GET', `/v1/nodes/${theirs}/artifact-copies`, { token: reader.secret });
    expect(hidden.status).toBe(404);
  });
});

describe('artifact copies: who may', () => {
  it("a tenant key records and removes on its own tenant's nodes; a grantee gets 403, a stranger 404 as for a missing node", async () => {
    await seedPool(h, { id: 'pool-owner', tenantId: 'umbrella', grants: ['partner'] });
    await seedPool(h, { id: 'pool-stranger', tenantId: 'stranger' });
    const nodeId = await seedNode(h, { poolId: 'pool-owner', tenantId: 'umbrella' });
    const writes = ['compute:artifacts:write', 'compute:nodes:read'];
    const owner = await tenantKey(h, 'umbrella', writes, 'umbrella-storage');
    const grantee = await tenantKey(h, 'partner', writes, 'partner-storage');
    const stranger = await tenantKey(h, 'stranger', writes, 'stranger-storage');
    const reader = await tenantKey(h, 'umbrella', ['compute:nodes:read'], 'umbrella-reader');

    const recorded = await record(nodeId, 'weights-x', { path: '/data/x' }, owner.secret);
    expect(recorded.status).toBe(201);
    expect((await artifactEvents(nodeId))[0]).toMatchObject({ actor: 'key:umbrella-storage' });

    const before = await snapshot(h);
    for (const [what, reply] of [
      ['grantee PUT', await record(nodeId, 'weights-y', { path: '/data/y' }, grantee.secret)],
      ['grantee DELETE', await remove(nodeId, 'weights-x', undefined, grantee.secret)],
    ] as const) {
      expect(reply.status, what).toBe(403);
      expect(reply.body.error, what).toMatchObject({
        code: 'FORBIDDEN',
        details: { poolId: 'pool-owner', grant: 'placement' },
      });
    }
    for (const [what, reply] of [
      ['reader PUT', await record(nodeId, 'weights-y', { path: '/data/y' }, reader.secret)],
      ['reader DELETE', await remove(nodeId, 'weights-x', undefined, reader.secret)],
    ] as const) {
      expect(reply.status, what).toBe(403);
      expect(reply.body.error.details, what).toEqual({ action: 'compute:artifacts:write' });
    }
    const missingNode = newId('node');
    for (const [method, hiddenReply, missingReply] of [
      [
        'PUT',
        await record(nodeId, 'weights-y', { path: '/data/y' }, stranger.secret),
        await record(missingNode, 'weights-y', { path: '/data/y' }, stranger.secret),
      ],
      [
        'DELETE',
        await remove(nodeId, 'weights-x', undefined, stranger.secret),
        await remove(missingNode, 'weights-x', undefined, stranger.secret),
      ],
    ] as const) {
      expect(hiddenReply.status, method).toBe(404);
      const { requestId: _a, ...hiddenError } = hiddenReply.body.error;
      const { requestId: _b, ...missingError } = missingReply.body.error;
      expect(JSON.stringify(hiddenError).replaceAll(nodeId, '<id>'), method).toBe(
        JSON.stringify(missingError).replaceAll(missingNode, '<id>'),
      );
    }
    expect(await snapshot(h)).toEqual(before);

    // The grantee reads what it sees; the stranger does not see the node.
    const granteeList = await call(h, 'GET', `/v1/nodes/${nodeId}/artifact-copies`, {
      token: grantee.secret,
    });
    expect(granteeList.body.items).toEqual([recorded.body]);
    expect(
      (await call(h, 'GET', `/v1/nodes/${nodeId}/artifact-copies`, { token: stranger.secret })).status,
    ).toBe(404);
    expect(
      (await call(h, 'GET', '/v1/artifacts/weights-x/copies', { token: stranger.secret })).body.items,
    ).toEqual([]);

    const removed = await remove(nodeId, 'weights-x', { reason: 'moved off' }, owner.secret);
    expect(removed.status).toBe(200);
    expect(removed.body.removedAt).toEqual(expect.any(String));
  });
});

describe('artifact copies: bad input', () => {
  it('refuses a bad artifact id, path or body with 400 INVALID_INPUT before anything changes', async () => {
    const nodeId = await seedPoolNode(h, 'pool-bad');
    await record(nodeId, 'weights-ok', { path: '/data/ok' });
    const before = await snapshot(h);
    const refusals: [string, string, unknown][] = [];
    for (const artifactId of [
      '-lead',
      '.hidden',
      'a'.repeat(129),
      'with space',
      'semi;colon',
      'ümlaut',
      'a%2Fb',
    ]) {
      refusals.push(['PUT', copyPath(nodeId, encodeURIComponent(artifactId)), { path: '/data/w' }]);
      refusals.push(['DELETE', copyPath(nodeId, encodeURIComponent(artifactId)), undefined]);
      refusals.push(['GET', `/v1/artifacts/${encodeURIComponent(artifactId)}/copies`, undefined]);
    }
    for (const path of [
      'data/w',
      '',
      '/',
      '/data//w',
      '/data/w/',
      '/data/./w',
      '/data/../etc/passwd',
      '/..',
      '/data/w\u0000',
      '/data/\u001b[31mw',
      '/data/\u202ew',
      `/${'x'.repeat(512)}`,
      42,
      null,
    ]) {
      refusals.push(['PUT', copyPath(nodeId, 'weights-ok'), { path }]);
    }
    refusals.push(['PUT', copyPath(nodeId, 'weights-ok'), {}]);
    refusals.push(['PUT', copyPath(nodeId, 'weights-ok'), undefined]);
    refusals.push(['PUT', copyPath(nodeId, 'weights-ok'), { path: '/data/ok', extra: 1 }]);
    refusals.push(['PUT', copyPath(nodeId, 'weights-ok'), { path: '/data/ok', reason: '' }]);
    refusals.push(['DELETE', copyPath(nodeId, 'weights-ok'), { reason: 'x'.repeat(257) }]);
    refusals.push(['PUT', copyPath('node_1', 'weights-ok'), { path: '/data/ok' }]);
    refusals.push(['GET', `/v1/nodes/${nodeId}/artifact-copies?limit=101`, undefined]);
    refusals.push([
      'GET',
      `/v1/nodes/${nodeId}/artifact-copies?cursor=${Buffer.from('nope').toString('base64url')}`,
      undefined,
    ]);
    for (const [method, path, body] of refusals) {
      const reply = await call(h, method, path, { body });
      const label = `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}`;
      expect(reply.status, label).toBe(400);
      expect(reply.body.error, label).toMatchObject({ code: 'INVALID_INPUT', requestId: expect.any(String) });
    }
    expect(await snapshot(h)).toEqual(before);

    // The longest path there is, in 3-byte characters, is taken as it is.
    const longest = `/${'€'.repeat(511)}`;
    const taken = await record(nodeId, 'weights-long', { path: longest });
    expect(taken.status).toBe(201);
    const [stored] = (await h.db.select().from(artifactCopies)).filter(
      (c) => c.artifactId === 'weights-long',
    );
    expect(stored?.path).toBe(longest);
  });
});

import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { createDb } from '../../db/client';
import { allocate, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

// The API needs Postgres only (test/outbox/ shows it answering with no worker or Temporal up):
// Postgres away is the outage it answers 503 to.
const h = useHarness({ worker: false });

/** An UNAVAILABLE answer that names nothing inside: no cause, no address, no stack. */
async function expectUnavailable(response: Response) {
  const text = await response.text();
  expect(response.status, text).toBe(503);
  const { error } = JSON.parse(text);
  expect(error).toMatchObject({ code: 'UNAVAILABLE', details: {}, requestId: expect.any(String) });
  expect(text).not.toMatch(/127\.0\.0\.1|localhost|ECONNREFUSED|:\d+:\d+\)/);
  return error as { message: string };
}

describe('Postgres cannot be reached', () => {
  it('a request answers UNAVAILABLE without its address, /readyz says so, and nothing changed', async () => {
    await seedPool(h, { id: 'pool-n', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-n', tenantId: 'acme' });
    await allocate(h, nodeId, 'acme');
    // The same API, its database a port nothing listens on.
    const nowhere = createDb('postgres://postgres@127.0.0.1:1/nowhere', { max: 1 });
    try {
      const app = createApp({ ...h.deps, db: nowhere.db });
      const request = (path: string, method = 'GET') =>
        app.request(path, { method, headers: { authorization: `Bearer ${h.operatorKey}` } });
      const error = await expectUnavailable(await request(`/v1/nodes/${nodeId}/drain`, 'POST'));
      expect(error.message).toMatch(/retry it/);
      const ready = await app.request('/readyz');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', postgres: false, outbox: null });
    } finally {
      await nowhere.close();
    }
    // The real database saw nothing of it.
    const node = await (
      await h.app.request(`/v1/nodes/${nodeId}`, { headers: { authorization: `Bearer ${h.operatorKey}` } })
    ).json();
    expect(node).toMatchObject({ cordoned: false, noScheduleReasons: [], version: 1 });
    expect(await eventsOf(h, nodeId)).toEqual([]);
  });
});

import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { allocate, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

// No worker runs for this file: nobody takes the workflow's `begin`.
const h = useHarness({ worker: false });

const drain = (app: ReturnType<typeof createApp>, nodeId: string) =>
  app.request(`/v1/nodes/${nodeId}/drain`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.operatorKey}` },
  });

/** An UNAVAILABLE answer that names nothing inside: no cause, no address, no stack. */
async function expectUnavailable(response: Response, address: string) {
  const text = await response.text();
  expect(response.status, text).toBe(503);
  const { error } = JSON.parse(text);
  expect(error).toMatchObject({ code: 'UNAVAILABLE', details: {}, requestId: expect.any(String) });
  expect(text).not.toContain(address);
  expect(text).not.toMatch(/127\.0\.0\.1|localhost|:\d+:\d+\)/);
  return error as { message: string };
}

async function seededNode(poolId: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme' });
  const nodeId = await seedNode(h, { poolId, tenantId: 'acme' });
  await allocate(h, nodeId, 'acme');
  return nodeId;
}

async function expectUnchanged(app: ReturnType<typeof createApp>, nodeId: string) {
  const node = await (
    await app.request(`/v1/nodes/${nodeId}`, { headers: { authorization: `Bearer ${h.operatorKey}` } })
  ).json();
  expect(node).toMatchObject({ cordoned: false, noScheduleReasons: [], version: 1 });
  expect(await eventsOf(h, nodeId)).toEqual([]);
}

describe('no worker takes the begin', () => {
  it('answers UNAVAILABLE within the deadline, says the outcome is unknown, and nothing changed', async () => {
    const nodeId = await seededNode('pool-u');
    const app = createApp({ ...h.deps, beginTimeoutMs: 1_500 });
    const started = Date.now();
    const error = await expectUnavailable(await drain(app, nodeId), h.temporalAddress);
    expect(Date.now() - started).toBeLessThan(5_000);
    // The workflow was started and may still take the begin: the answer must not say otherwise.
    expect(error.message).toMatch(/may still take effect/);
    expect(error.message).not.toMatch(/nothing was changed/);
    await expectUnchanged(app, nodeId);
  });

  it('a call the server cancels (its deadline first, as under load) is UNAVAILABLE too, not a 500', async () => {
    const nodeId = await seededNode('pool-c');
    const app = createApp({ ...h.deps, beginTimeoutMs: 10_000 });
    // The same CANCELLED status the server's RST_STREAM gives when its copy of the deadline fires first.
    const abort = new AbortController();
    const response = h.temporal.withAbortSignal(abort.signal, async () => drain(app, nodeId));
    setTimeout(() => abort.abort(), 300);
    await expectUnavailable(await response, h.temporalAddress);
    await expectUnchanged(app, nodeId);
  });
});

describe('Temporal cannot be reached', () => {
  it('answers UNAVAILABLE without its address', async () => {
    const nodeId = await seededNode('pool-n');
    // A port nothing listens on; the client connects lazily, so the start is what fails.
    const address = '127.0.0.1:1';
    const connection = Connection.lazy({ address });
    const temporal = new Client({ connection, namespace: 'default' });
    try {
      const app = createApp({ ...h.deps, temporal, beginTimeoutMs: 1_500 });
      const error = await expectUnavailable(await drain(app, nodeId), address);
      expect(error.message).toMatch(/^Temporal/);
      const ready = await app.request('/readyz');
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', temporal: false });
      await expectUnchanged(app, nodeId);
    } finally {
      await connection.close();
    }
  });
});

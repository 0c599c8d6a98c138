import type { Client } from '@temporalio/client';
import type { Db } from '../../db/client';
import { nodes, pools } from '../../db/schema';
import { newId } from '../../domain/ids';
import { drainProgressQuery, drainWorkflowId } from '../../workflows/definitions';
import { paced, until, type Pacing } from './pace';

/** A call to the API's HTTP port as the operator: status and parsed body. */
export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: any }>;

/** `ApiCall` on http://127.0.0.1:<port>, with the bootstrap operator key. */
export function apiCaller(port: number, operatorKey: string): ApiCall {
  const base = `http://127.0.0.1:${port}`;
  return async (method, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${operatorKey}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
}

/** N adopted nodes of one pool, written straight to the database, each given one allocation through the API. */
export async function seedNodesWithAllocations(db: Db, call: ApiCall, n: number, pacing: Pacing) {
  await db.insert(pools).values({ id: 'bench', kind: 'bare-metal', siteId: 'fra1', tenantId: 'bench' });
  const nodeIds = Array.from({ length: n }, () => newId('node'));
  await db.insert(nodes).values(
    nodeIds.map((id, i) => ({
      id,
      poolId: 'bench',
      tenantId: 'bench',
      siteId: 'fra1',
      hostname: `bench-${String(i).padStart(4, '0')}`,
      provisionState: 'adopted' as const,
      connectivity: 'connected' as const,
    })),
  );
  const allocationOf = new Map<string, string>();
  await paced(nodeIds, pacing, async (nodeId) => {
    const reply = await call('POST', '/v1/allocations', { nodeId, tenantId: 'bench', kind: 'job' });
    if (reply.status !== 201) throw new Error(`allocation: ${reply.status} ${JSON.stringify(reply.body)}`);
    allocationOf.set(nodeId, reply.body.id);
  });
  return { nodeIds, allocationOf };
}

/** Drains every node through the API and waits until each drain waits on its one allocation. */
export async function drainAndWait(
  client: Client,
  call: ApiCall,
  nodeIds: string[],
  pacing: Pacing,
  timeoutMs: number,
): Promise<void> {
  await paced(nodeIds, pacing, async (nodeId) => {
    const reply = await call('POST', `/v1/nodes/${nodeId}/drain`, { reason: 'bench' });
    if (reply.status !== 202) throw new Error(`drain: ${reply.status} ${JSON.stringify(reply.body)}`);
  });
  await waitAll('drains waiting', nodeIds, timeoutMs, async (nodeId) => {
    const progress = await client.workflow.getHandle(drainWorkflowId(nodeId)).query(drainProgressQuery);
    return progress.phase === 'waiting' && progress.waitingFor?.allocations === 1;
  });
}

/**
 * Checks every id until each has passed once (a failed check is retried), within `timeoutMs`; a
 * second between passes, since a query or describe is work for the very worker being waited on.
 */
export async function waitAll(
  what: string,
  ids: string[],
  timeoutMs: number,
  check: (id: string) => Promise<boolean>,
) {
  const pending = new Set(ids);
  await until(
    what,
    async () => {
      await paced([...pending], { concurrency: 8 }, async (id) => {
        if (await check(id).catch(() => false)) pending.delete(id);
      });
      return pending.size === 0;
    },
    timeoutMs,
    1000,
  );
}

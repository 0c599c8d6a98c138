import { describe, expect, it } from 'vitest';
import { createLogger } from '../../observability/log';
import { drainWorkflowId } from '../../workflows/definitions';
import { Browser, useConsole } from '../console/console-client';
import { allocate, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

/** Every line the processes under test wrote, as a log collector reads stdout. */
class CapturedLines {
  text = '';
  write(chunk: string): void {
    this.text += chunk;
  }
  entries(): Record<string, any>[] {
    return this.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, any>);
  }
  withRequestId(requestId: string) {
    return this.entries().filter((entry) => entry.requestId === requestId);
  }
  accessLines(requestId: string) {
    return this.withRequestId(requestId).filter((entry) => entry.msg === 'request');
  }
}

const output = new CapturedLines();
const h = useHarness({ log: createLogger({ service: 'test', level: 'info', destination: output }) });
const site = useConsole(h);

async function send(path: string, init: RequestInit & { token?: string | null } = {}) {
  const headers = new Headers(init.headers);
  const token = init.token === undefined ? h.operatorKey : init.token;
  if (token !== null) headers.set('authorization', `Bearer ${token}`);
  if (init.body !== undefined) headers.set('content-type', 'application/json');
  const response = await h.app.request(path, { ...init, headers });
  const requestId = response.headers.get('x-request-id');
  if (!requestId) throw new Error(`no X-Request-Id on the answer to ${path}`);
  return { status: response.status, body: (await response.json()) as any, requestId };
}

describe('the access log', () => {
  it('writes one JSON line per request: method, route pattern, status, ms, request id, principal', async () => {
    await seedPool(h, { id: 'pool-read', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-read', hostname: 'gpu-log-01' });
    const reply = await send(`/v1/nodes/${nodeId}`);
    expect(reply.status).toBe(200);

    const lines = output.accessLines(reply.requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      service: 'test',
      msg: 'request',
      method: 'GET',
      route: '/v1/nodes/:id',
      status: 200,
      requestId: reply.requestId,
      principal: 'bootstrap',
    });
    expect(lines[0]!.ms).toBeGreaterThanOrEqual(0);
    // The pattern, not the path: the node's id is not in the line.
    expect(JSON.stringify(lines[0])).not.toContain(nodeId);
    // The bearer token is in no line at all.
    expect(output.text).not.toContain(h.operatorKey);
  });

  it('logs refusals too: a 404 and a failed authentication, without the presented secret', async () => {
    const missing = await send('/v1/no-such-thing');
    expect(missing.status).toBe(404);
    expect(output.accessLines(missing.requestId)).toEqual([
      expect.objectContaining({ level: 'info', method: 'GET', status: 404, principal: 'bootstrap' }),
    ]);

    const wrongSecret = 'ddk_not-a-real-key-but-a-secret-all-the-same';
    const refused = await send('/v1/nodes', { token: wrongSecret });
    expect(refused.status).toBe(401);
    const [line, ...more] = output.accessLines(refused.requestId);
    expect(more).toHaveLength(0);
    expect(line).toMatchObject({ method: 'GET', route: '/v1/*', status: 401 });
    expect(line).not.toHaveProperty('principal');
    expect(output.text).not.toContain(wrongSecret);
  });

  it('a console page is one access line: its in-process calls to the API add none', async () => {
    const browser = new Browser(site.base);
    expect((await browser.signIn(h.operatorKey)).status).toBe(303);
    const before = output.entries().filter((entry) => entry.msg === 'request').length;
    const page = await browser.get('/console');
    expect(page.status).toBe(200);
    const requestId = page.headers.get('x-request-id')!;

    // The fleet page asked the API for nodes and pools in-process; only the page is logged.
    const lines = output.accessLines(requestId);
    expect(lines).toEqual([expect.objectContaining({ method: 'GET', route: '/console', status: 200 })]);
    expect(output.entries().filter((entry) => entry.msg === 'request')).toHaveLength(before + 1);
    // Neither the key signed in with nor the session cookie is written anywhere.
    expect(output.text).not.toContain(h.operatorKey);
    expect(output.text).not.toContain(browser.cookie!.split('=')[1]!);
  });
});

describe('one request id finds a drain', () => {
  it('the HTTP line, the workflow start and every activity carry the id of the request that caused them', async () => {
    await seedPool(h, { id: 'pool-log', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-log', tenantId: 'acme', hostname: 'gpu-log-02' });
    const allocation = await allocate(h, nodeId, 'acme');
    const workflowId = drainWorkflowId(nodeId);

    const drain = await send(`/v1/nodes/${nodeId}/drain`, {
      method: 'POST',
      body: JSON.stringify({ reason: 'logs test' }),
    });
    expect(drain.status).toBe(202);
    expect(output.accessLines(drain.requestId)).toEqual([
      expect.objectContaining({ method: 'POST', route: '/v1/nodes/:id/drain', status: 202 }),
    ]);
    // The workflow's start (the dispatcher's, under the request's id) and its first look.
    const started = await eventually(async () => {
      const lines = output.withRequestId(drain.requestId);
      const start = lines.find((line) => line.msg === 'workflow started' && line.workflowId === workflowId);
      const steps = lines.filter(
        (line) => line.msg === 'activity completed' && line.workflowId === workflowId,
      );
      return start && steps.length > 0 ? steps : undefined;
    });
    expect(started[0]).toMatchObject({ level: 'info', requestId: drain.requestId, workflowId });
    expect(typeof started[0]!.activity).toBe('string');

    // The release wakes the waiting drain through the outbox: what the drain does next names it.
    const release = await send(`/v1/allocations/${allocation}/release`, { method: 'POST' });
    expect(release.status).toBe(200);
    await eventually(async () => (await eventsOf(h, nodeId, 'node.drained')).length > 0);
    await eventually(async () =>
      output.withRequestId(release.requestId).some((line) => line.workflowId === workflowId),
    );
    const stepsOf = (requestId: string) =>
      output
        .withRequestId(requestId)
        .filter((line) => line.msg === 'activity completed' && line.workflowId === workflowId)
        .map((line) => line.activity as string);
    expect(stepsOf(drain.requestId)).toEqual(['lookAtDrain']);
    expect(stepsOf(release.requestId)).toEqual(['lookAtDrain']);
    expect(output.text).not.toContain(h.operatorKey);
  });
});

import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { serveWorkerMetrics } from './metrics-server';

let close: (() => void) | undefined;
afterEach(() => close?.());

describe("the worker's own HTTP endpoints", () => {
  it('answer /readyz 503 until the worker polls, 200 after; /metrics either way; 404 elsewhere', async () => {
    let polling = false;
    const { server, port } = await serveWorkerMetrics(new Registry(), { port: 0, ready: () => polling });
    close = () => server.close();
    const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`);

    const starting = await get('/readyz');
    expect(starting.status).toBe(503);
    expect(await starting.json()).toEqual({ status: 'starting', process: process.pid });
    expect((await get('/metrics')).status).toBe(200);

    polling = true;
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', process: process.pid });

    const elsewhere = await get('/healthz');
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.text()).toContain('GET /metrics and GET /readyz');
  });
});

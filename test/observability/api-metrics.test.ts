import { describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { hashSecret } from '../../domain/secrets';
import { call } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { parseSamples, valueOf } from '../support/scrape';

const h = useHarness({ worker: false });
const REQUESTS = 'drydock_http_request_duration_seconds';

async function apiSamples() {
  const reply = await call<string>(h, 'GET', '/metrics', { token: null });
  expect(reply.status).toBe(200);
  return { text: reply.body, samples: parseSamples(reply.body) };
}

describe('GET /metrics on the API', () => {
  it('counts a request under its route pattern and status, never its raw path', async () => {
    const unknown = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    const route = { method: 'GET', route: '/v1/nodes/:id', status: '404' };
    const unmatched = { method: 'GET', route: '/*', status: '404' };
    const earlier = (await apiSamples()).samples;
    const before = valueOf(earlier, `${REQUESTS}_count`, route);
    const beforeUnmatched = valueOf(earlier, `${REQUESTS}_count`, unmatched);

    expect((await call(h, 'GET', `/v1/nodes/${unknown}`)).status).toBe(404);
    expect((await call(h, 'GET', '/no/such/route-4711', { token: null })).status).toBe(404);

    const { text, samples } = await apiSamples();
    expect(valueOf(samples, `${REQUESTS}_count`, route)).toBe(before + 1);
    // Every bucket up to +Inf holds it, so latency quantiles see it; the other statuses do not.
    expect(valueOf(samples, `${REQUESTS}_bucket`, { ...route, le: '+Inf' })).toBe(before + 1);
    expect(valueOf(samples, `${REQUESTS}_count`, { route: '/v1/nodes/:id', status: '200' })).toBe(0);
    expect(valueOf(samples, `${REQUESTS}_sum`, route)).toBeGreaterThan(0);
    // A path no route matches counts under the catch-all pattern.
    expect(valueOf(samples, `${REQUESTS}_count`, unmatched)).toBe(beforeUnmatched + 1);
    // Bounded labels: neither the node id nor the unmatched path becomes a series.
    expect(text).not.toContain(unknown);
    expect(text).not.toContain('route-4711');
    // Node's own process metrics, under their standard names.
    expect(valueOf(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });
});

describe('what /metrics, /readyz and /healthz tell a caller without a credential', () => {
  it('no runtime version; with DRYDOCK_METRICS_TOKEN set, /metrics answers its bearer only', async () => {
    for (const path of ['/metrics', '/readyz', '/healthz']) {
      const reply = await h.app.request(path);
      const text = `${JSON.stringify([...reply.headers])}${await reply.text()}`;
      expect(text, path).not.toContain(process.version);
      expect(text, path).not.toContain(process.versions.v8);
      expect(text, path).not.toContain('nodejs_version_info');
    }

    const token = 'metrics-token-0123456789abcdef';
    const app = createApp({ ...h.deps, metricsTokenHash: hashSecret(token) });
    const scrape = (authorization?: string) =>
      app.request('/metrics', { headers: authorization ? { authorization } : {} });
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789',
      `Bearer ${h.operatorKey}`,
      token,
    ]) {
      const refused = await scrape(authorization);
      expect(refused.status, String(authorization)).toBe(401);
      const body = (await refused.json()) as { error: { code: string; message: string; requestId: string } };
      expect(body.error).toMatchObject({
        code: 'UNAUTHENTICATED',
        message: expect.stringContaining('metrics token'),
      });
      expect(body.error.requestId).toMatch(/^req_/);
    }
    const scraped = await scrape(`Bearer ${token}`);
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('process_cpu_seconds_total');
    // The token opens /metrics and nothing else.
    const other = await app.request('/v1/nodes', { headers: { authorization: `Bearer ${token}` } });
    expect(other.status).toBe(401);
  });
});

import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness';
import { Browser, useConsole } from './console-client';

const h = useHarness({ worker: false, rateLimits: { authFailures: { perMinute: 0.01, burst: 3 } } });
const server = useConsole(h);

describe('console sign-in and the per-address limit of failed authentications', () => {
  it('counts each wrong key once, then answers 429 with Retry-After; a good key still signs in', async () => {
    const browser = new Browser(server.base);
    for (let i = 0; i < 3; i++) expect((await browser.signIn(`wrong-key-${i}`)).status).toBe(403);
    const limited = await browser.signIn('wrong-key-3');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.html).toContain('too many failed authentications');
    expect(limited.headers.get('set-cookie')).toBeNull();

    const signedIn = await browser.signIn(h.operatorKey);
    expect(signedIn.status).toBe(303);
    expect((await browser.get('/console')).status).toBe(200);
    // The API's own bucket for this address is the one the console spent: the next wrong key
    // straight at the API is limited too.
    const direct = await fetch(`${server.base}/v1/nodes`, { headers: { authorization: 'Bearer wrong' } });
    expect(direct.status).toBe(429);
  });
});

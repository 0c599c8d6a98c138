import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('the router', () => {
  it("is Hono's one-regexp router: no two routes of the app (the console's included) make it fall back", async () => {
    expect((await h.app.request('/healthz')).status).toBe(200);
    // SmartRouter names the router it settled on at the first match.
    expect(h.app.router.name).toBe('SmartRouter + RegExpRouter');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFERENCE_SCRIPT_PATH } from '../../api/docs-page';
import { closeServer, listen } from '../../api/server';
import { screenshot, useBrowser } from '../support/browser';
import { useHarness } from '../support/harness';

/** /docs as an operator opens it on a network without internet access. */
const h = useHarness({ worker: false });
const b = useBrowser();
let origin: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  const { server, port } = await listen(h.deps, 0);
  origin = `http://127.0.0.1:${port}`;
  stop = () => closeServer(server);
});
afterAll(() => stop?.());

const OPERATION = "Long-poll the node's pending commands";
const FALLBACK = 'If it does not appear, the API is described by its OpenAPI document';

/** What the page complained about: errors on its console (CSP refusals among them) and uncaught ones. */
function complaints(): string[] {
  const seen: string[] = [];
  b.page.on('console', (message) => {
    if (message.type() === 'error') seen.push(message.text());
  });
  b.page.on('pageerror', (error) => seen.push(error.message));
  return seen;
}

describe('/docs', () => {
  it('renders the reference from this process alone, nothing fetched from outside', async () => {
    const seen = complaints();
    await b.page.goto(`${origin}/docs`);
    await b.page.getByText(OPERATION).first().waitFor();
    await expect(b.page.getByText(FALLBACK).isVisible()).resolves.toBe(false);
    await screenshot(b.page, 'docs', { fullPage: false });
    expect(b.blocked).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("gives no query parameter an example: the reference's Test Request sends each unfilled", async () => {
    // Scalar fills a query parameter with its example: `List nodes` tried first would have asked
    // for the nodes of an example selector, and answered [].
    const document = (await (await fetch(`${origin}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: Record<string, unknown>[] }>>;
    };
    const queries = Object.values(document.paths)
      .flatMap((item) => Object.values(item))
      .flatMap((operation) => operation.parameters ?? [])
      .filter((parameter) => parameter.in === 'query');
    expect(queries.length).toBeGreaterThan(20);
    expect(queries.filter((p) => 'example' in p || 'example' in (p.schema as object))).toEqual([]);
    const selector = document.paths['/v1/nodes']!.get!.parameters!.find((p) => p.name === 'selector')!;
    expect(selector.description).toContain('rack=b7,gpu.model=H100');
  });

  it('shows a link to /openapi.json when its script does not load', async () => {
    await b.page.route(`**${REFERENCE_SCRIPT_PATH}*`, (route) =>
      route.fulfill({ status: 404, body: 'gone' }),
    );
    await b.page.goto(`${origin}/docs`);
    await b.page.getByText(FALLBACK).waitFor();
    const link = b.page.getByRole('link', { name: '/openapi.json' });
    await expect(link.isVisible()).resolves.toBe(true);
    await screenshot(b.page, 'docs-fallback');
    await expect(b.page.getByText(OPERATION).count()).resolves.toBe(0);

    const [response] = await Promise.all([b.page.waitForResponse(`${origin}/openapi.json`), link.click()]);
    expect(response.status()).toBe(200);
    expect((await response.json()).paths['/v1/agent/commands']).toBeDefined();
    expect(b.blocked).toEqual([]);
  });

  it('allows this origin only, and serves the script as JavaScript cached for good under a URL of its content', async () => {
    const page = await fetch(`${origin}/docs`);
    const policy = page.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).not.toMatch(/https?:|\*/);
    const html = await page.text();
    const src = /<script src="([^"]+)"/.exec(html)![1]!;
    expect(src).toMatch(new RegExp(`^${REFERENCE_SCRIPT_PATH}\\?v=[0-9a-f]{16}$`));
    const response = await fetch(`${origin}${src}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await response.text()).toContain('createApiReference');
  });
});

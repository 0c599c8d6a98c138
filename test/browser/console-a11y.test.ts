import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { setNode } from '../support/builders';
import { join } from '../support/agents';
import { allocate, call, seedNode, seedPool } from '../support/fixtures';
import { seriousViolations } from '../support/axe';
import { screenshot, useBrowser } from '../support/browser';
import { useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);
const b = useBrowser();

const POOL = 'pool-a11y';
/** The width of a phone held upright (an iPhone 12 to 15). */
const PHONE = { width: 390, height: 844 };

/** Every console page, by name, once the fleet below is seeded. */
let pages: [name: string, path: string][];

beforeAll(async () => {
  await seedPool(h, { id: POOL, tenantId: 'acme' });
  const busy = await seedNode(h, { poolId: POOL, hostname: 'gpu-a11y-01', labels: { rack: 'b7' } });
  const lost = await seedNode(h, { poolId: POOL, hostname: 'gpu-a11y-02', labels: { rack: 'b7' } });
  const since = new Date(Date.now() - 3_600_000).toISOString();
  await setNode(h, busy, {
    lastSeenAt: new Date(),
    conditions: [{ type: 'GpuXidError', status: true, reason: 'Xid 79', since }],
  });
  await setNode(h, lost, { liveness: 'lost', connectivity: 'disconnected', maintenance: true });
  await allocate(h, busy, 'acme');
  expect((await call(h, 'POST', `/v1/nodes/${lost}/cordon`, { body: { reason: 'fan' } })).status).toBe(200);
  // No worker: the drain stays pending, as an operation waiting for one.
  const drain = await call(h, 'POST', `/v1/nodes/${busy}/drain`, { body: { reason: 'driver roll-out' } });
  expect(drain.status).toBe(202);
  const command = await call(h, 'POST', `/v1/nodes/${busy}/commands`, {
    headers: { 'idempotency-key': 'a11y-diagnostics' },
    body: { action: 'diagnostics', reason: 'xid storm' },
  });
  expect(command.status).toBe(201);
  const token = await call(h, 'POST', '/v1/tokens', { body: { poolId: POOL, ttl: '24h', maxUses: 2 } });
  expect(token.status).toBe(201);
  // A machine that joined without a token, asking for the pool: waiting for approval.
  const pending = await join(h, { hostname: 'gpu-a11y-03', poolId: POOL });
  expect(pending.status).toBe(201);
  pages = [
    ['fleet', '/console'],
    ['nodes', '/console/nodes'],
    ['pools', '/console/pools'],
    ['pool', `/console/pools/${POOL}`],
    ['node', `/console/nodes/${busy}`],
    ['lost node', `/console/nodes/${lost}`],
    ['pending node', `/console/nodes/${pending.body.nodeId}`],
    ['approve', `/console/nodes/${pending.body.nodeId}/approve`],
    ['drain', `/console/nodes/${lost}/drain`],
    ['block', `/console/nodes/${busy}/block`],
    ['remediate', `/console/nodes/${busy}/remediate`],
    ['purge', `/console/nodes/${busy}/purge`],
    ['operations', '/console/operations'],
    ['operation', `/console/operations/${drain.body.operation.id}`],
    ['cancel', `/console/operations/${drain.body.operation.id}/cancel`],
    ['audit', '/console/audit'],
    ['tokens', '/console/tokens'],
    ['command', `/console/commands/${command.body.id}`],
  ];
});

/** Opens `path` and waits for its heading. */
async function open(page: Page, path: string) {
  const response = await page.goto(`${server.base}${path}`);
  expect({ path, status: response?.status() }).toEqual({ path, status: 200 });
  await page.locator('main h1').first().waitFor();
}

/** Signs in with the operator key from the sign-in page `page` shows. */
async function signIn(page: Page) {
  await page.getByLabel('API key').fill(h.operatorKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.base}/console`);
}

/** axe's serious and critical findings on the page as it is, one line each, named by `name`. */
async function findings(page: Page, name: string): Promise<string[]> {
  return (await seriousViolations(page)).map(
    (v) => `${name}: ${v.rule} (${v.impact}) ${v.help}: ${v.nodes.map((n) => n.target).join(', ')}`,
  );
}

/** A computed style property of the first element `selector` finds. */
function styleOf(page: Page, selector: string, property: string): Promise<string> {
  return page
    .locator(selector)
    .first()
    .evaluate(
      (element, name) => (globalThis as unknown as Styles).getComputedStyle(element).getPropertyValue(name),
      property,
    );
}
type Styles = { getComputedStyle(element: unknown): { getPropertyValue(name: string): string } };

describe('the console for every operator: axe-core, dark mode, keyboard, phone width', () => {
  it.each([
    ['light', 'rgb(255, 255, 255)'],
    ['dark', 'rgb(17, 24, 39)'],
  ] as const)(
    'has no serious or critical axe violation on any page in the %s scheme',
    async (scheme, background) => {
      const page = b.page;
      await page.emulateMedia({ colorScheme: scheme });
      await open(page, '/console/sign-in');
      // The console's own stylesheet follows the scheme.
      expect(await styleOf(page, 'body', 'background-color')).toBe(background);
      const found = await findings(page, 'sign-in');
      await signIn(page);
      for (const [name, path] of pages) {
        await open(page, path);
        found.push(...(await findings(page, name)));
        if (name === 'node') {
          await screenshot(page, `console-node-${scheme}`);
          // Its Actions menu, open: what it shows is checked too.
          await page.locator('details.menu summary').click();
          await page.locator('details.menu[open] li').first().waitFor();
          found.push(...(await findings(page, 'node, Actions open')));
        }
      }
      expect(found).toEqual([]);
      expect(b.blocked).toEqual([]);
    },
  );

  it('the axe check finds what it should: an image without a text, text too faint to read', async () => {
    const page = b.page;
    await open(page, '/console/sign-in');
    await page.locator('main').evaluate((main) => {
      const image = main.ownerDocument.createElement('img');
      image.src = '/console/assets/console.css';
      const faint = main.ownerDocument.createElement('p');
      faint.textContent = 'hard to read';
      faint.style.color = '#f4f4f4';
      main.append(image, faint);
    });
    const rules = (await seriousViolations(page)).map((v) => v.rule).sort();
    expect(rules).toEqual(['color-contrast', 'image-alt']);
  });

  it('skips to the content from the keyboard, with a focus that shows', async () => {
    const page = b.page;
    await open(page, '/console/sign-in');
    await signIn(page);
    await open(page, pages.find(([name]) => name === 'node')![1]);
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to content' });
    expect(await skip.evaluate((link) => link.matches(':focus'))).toBe(true);
    const box = (await skip.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(await styleOf(page, ':focus', 'outline-style')).toBe('solid');
    await page.keyboard.press('Enter');
    await page.waitForURL(/#main$/);
    // The next Tab starts from the content, past the header's links.
    await page.keyboard.press('Tab');
    expect(await page.locator('main :focus').count()).toBe(1);
  });

  it('fits a phone: no page scrolls sideways, tables scroll in their box, Sign out stays on screen', async () => {
    const page = b.page;
    await page.setViewportSize(PHONE);
    await open(page, '/console/sign-in');
    // Measured in one turn of the page's script: a live region may be replaced between two calls.
    const fit = () =>
      page.locator('html').evaluate((html, width) => {
        const signOut = [...html.querySelectorAll('button')].find((b) => b.textContent === 'Sign out');
        const box = signOut?.getBoundingClientRect();
        return {
          scrollsSideways: html.scrollWidth > width && `${html.scrollWidth} px`,
          signOut: box ? box.left >= 0 && box.right <= width : 'none',
        };
      }, PHONE.width);
    expect(await fit()).toEqual({ scrollsSideways: false, signOut: 'none' });
    await signIn(page);
    for (const [name, path] of pages) {
      await open(page, path);
      expect({ name, ...(await fit()) }).toEqual({ name, scrollsSideways: false, signOut: true });
    }
    // A table wider than a phone scrolls inside its own box, which stays within the screen.
    await open(page, '/console/operations');
    const box = await page
      .locator('.table-box')
      .first()
      .evaluate(
        (element, width) => ({
          scrolls: element.ownerDocument.defaultView!.getComputedStyle(element).overflowX,
          within: element.getBoundingClientRect().right <= width,
        }),
        PHONE.width,
      );
    expect(box).toEqual({ scrolls: 'auto', within: true });
    await screenshot(page, 'console-operations-phone');
  });
});

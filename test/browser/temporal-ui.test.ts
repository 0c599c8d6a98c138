import { DefaultLogger, Runtime } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config';
import { freePort } from '../../scripts/services/process';
import { startTemporal, type TemporalServer } from '../../scripts/services/temporal';
import { drainWorkflowId } from '../../workflows/definitions';
import { screenshot, useBrowser } from '../support/browser';
import { operationWhen, seedPoolNode } from '../support/builders';
import { allocate, call } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { startOwnWorker } from '../support/own-worker';

// The run's Temporal server has no Web UI: this file starts one of its own that has.
const h = useHarness({ worker: false });
const browser = useBrowser();
let server: TemporalServer | null = null;
const stops: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await server?.stop();
});

describe('a running drain in the Temporal Web UI', () => {
  it('its stack trace (the Call Stack tab) shows where the drain waits, in Drydock’s own source', async () => {
    const config = loadConfig();
    const port = await freePort();
    server = await startTemporal({
      cli: config.TEMPORAL_CLI,
      home: config.DRYDOCK_HOME,
      port,
      uiPort: await freePort(),
      log: () => {},
    });
    Runtime.install({ shutdownSignals: [], logger: new DefaultLogger('WARN') });
    const own = await startOwnWorker(h, server.address);
    stops.push(own.stop);

    const nodeId = await seedPoolNode(h, 'pool-ui');
    await allocate(h, nodeId, 'acme');
    const drain = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'stack trace' } });
    expect(drain.status).toBe(202);
    await operationWhen(h, drain.body.operation.id, (op) => op.progress.phase === 'waiting', 30_000);

    const { page } = browser;
    const workflow = encodeURIComponent(drainWorkflowId(nodeId));
    await page.goto(`${server.uiUrl}/namespaces/default/workflows/${workflow}`);
    // The UI keeps a history request open: wait for what it shows, never for network idle.
    // The stack-trace query's tab: "Call Stack" in this UI (v2.42), "Stack Trace" in older ones.
    await page.getByText('Call Stack', { exact: true }).first().click({ timeout: 30_000 });
    const trace = page.getByText(/looks\.ts/).first();
    await trace.waitFor({ timeout: 30_000 });
    expect(await page.locator('body').innerText()).not.toMatch(/stack traces are not enabled/i);
    await screenshot(page, 'temporal-ui-stack-trace', { fullPage: false });
    expect(browser.blocked.filter((url) => !url.includes('fonts.googleapis'))).toEqual([]);
  }, 180_000);
});

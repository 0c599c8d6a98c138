import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { workflowOutbox } from '../../db/schema';
import { loadConfig } from '../../config';
import { freePort } from '../../scripts/services/process';
import { startTemporal, type TemporalServer } from '../../scripts/services/temporal';
import { drainWorkflowId } from '../../workflows/definitions';
import { operationWhen, seedPoolNode } from '../support/builders';
import { allocate, call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { startOwnWorker } from '../support/own-worker';

// A Temporal server of this file's own, so it can be stopped and started again without touching
// the run's: its data in a file, so it comes back with what it had.
const h = useHarness({ worker: false });
const home = mkdtempSync(join(tmpdir(), 'drydock-temporal-down-'));
let server: TemporalServer | null = null;
let port = 0;

async function startServer(): Promise<void> {
  const config = loadConfig();
  server = await startTemporal({
    cli: config.TEMPORAL_CLI,
    home: config.DRYDOCK_HOME,
    port,
    headless: true,
    dbFile: join(home, 'temporal.db'),
    log: () => {},
  });
}

afterAll(async () => {
  await server?.stop();
  rmSync(home, { recursive: true, force: true });
});

describe('a drain requested while Temporal is down', () => {
  it('answers 202 at once, waits in the outbox, and runs when Temporal is back', async () => {
    port = await freePort();
    await startServer();
    // Quiet while the server is away: core retries its polls, and says so at WARN each time.
    Runtime.install({
      shutdownSignals: [],
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
    });
    const address = `127.0.0.1:${port}`;
    const { temporal, stop } = await startOwnWorker(h, address);
    try {
      const nodeId = await seedPoolNode(h, 'pool-down');
      const allocationId = await allocate(h, nodeId, 'acme');
      await server!.stop();

      const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'outage' } });
      expect(reply.status).toBe(202);
      expect(reply.body.node).toMatchObject({ cordoned: true, noScheduleReasons: ['draining'] });
      const opId = reply.body.operation.id as string;
      // The dispatcher tried and failed: the start waits, with why, and the operation says it waits.
      const waiting = await eventually(async () => {
        const [row] = await h.db.select().from(workflowOutbox).where(eq(workflowOutbox.operationId, opId));
        return row?.lastError ? row : undefined;
      }, 30_000);
      expect(waiting.attempts).toBeGreaterThanOrEqual(1);
      expect((await call(h, 'GET', `/v1/operations/${opId}`)).body).toMatchObject({
        status: 'pending',
        progress: { phase: 'waiting-for-worker' },
      });

      await startServer();
      await operationWhen(h, opId, (op) => op.progress.phase === 'waiting', 55_000);
      expect((await call(h, 'POST', `/v1/allocations/${allocationId}/release`)).status).toBe(200);
      await operationWhen(h, opId, (op) => op.status === 'succeeded', 30_000);
      expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining', 'node.drained']);
      expect(await temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('drained');
    } finally {
      await stop();
    }
  }, 180_000);
});

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { accelerators } from '../../db/schema';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { joinedMachine, runMachine, useAgentBench } from './agent-process';
import { machineConfig, machineScript } from './remediating-machine';

const h = useHarness({ worker: false });
const bench = useAgentBench(h);

const gpus = (count: number, model = 'NVIDIA-H100-80GB-HBM3') =>
  Array.from({ length: count }, (_, i) => ({ model, serial: `GPU-${i}`, memoryBytes: 85_899_345_920 }));

/** The node's labels, by key: `value (source)`. */
async function labels(nodeId: string) {
  const node = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
  return Object.fromEntries(
    (node.labels as { key: string; value: string; source: string }[]).map((l) => [
      l.key,
      `${l.value} (${l.source})`,
    ]),
  );
}

describe('drydock-agent discovers the inventory with its configured command and reports it', () => {
  it('reports at start and on change only; accelerators and inventory labels follow, in one event each', async () => {
    const m = await joinedMachine(h, bench, 'pool-discovery');
    const file = join(dirname(m.dir), 'inventory.json');
    const write = (inventory: unknown) => writeFileSync(file, JSON.stringify(inventory));
    write({
      accelerators: gpus(8),
      storageRoots: [{ path: '/data', bytes: 7_680_000_000_000 }],
      cpu: { count: 192, model: 'AMD EPYC 9654 96-Core Processor' },
      memoryBytes: 2_163_988_934_656,
    });
    const discover = machineScript(m, 'discover.sh', `cat "${file}"`);
    const config = machineConfig(m, `inventory: { command: ["${discover}"], every: 300ms, timeout: 5s }\n`);
    const agent = await runMachine(bench, m, m.dir, ['--config', config]);

    await eventually(async () =>
      (await eventsOf(h, m.nodeId, 'node.inventory.changed')).length > 0 ? true : undefined,
    );
    expect(await labels(m.nodeId)).toEqual({
      'gpu.model': 'NVIDIA-H100-80GB-HBM3 (inventory)',
      'gpu.count': '8 (inventory)',
      'cpu.count': '192 (inventory)',
      'memory.gib': '2015 (inventory)',
    });
    const rows = await h.db.select().from(accelerators).where(eq(accelerators.nodeId, m.nodeId));
    expect(rows.filter((r) => r.state === 'active')).toHaveLength(8);

    // The same inventory again and again: nothing more is recorded.
    await agent.waitForLog(/inventory reported/, 5_000);
    const quiet = (await call(h, 'GET', `/v1/nodes/${m.nodeId}`)).body.version;

    // A GPU falls off the bus: one change, reported at the next run.
    write({
      accelerators: gpus(7),
      storageRoots: [{ path: '/data', bytes: 7_680_000_000_000 }],
      cpu: { count: 192, model: 'AMD EPYC 9654 96-Core Processor' },
      memoryBytes: 2_163_988_934_656,
    });
    const changes = await eventually(async () => {
      const events = await eventsOf(h, m.nodeId, 'node.inventory.changed');
      return events.length === 2 ? events : undefined;
    });
    expect(changes[1]).toMatchObject({
      actor: `node:${m.nodeId}`,
      data: { set: { 'gpu.count': '7' }, removed: [], accelerators: 7, storageRoots: 1 },
    });
    expect((await labels(m.nodeId))['gpu.count']).toBe('7 (inventory)');
    const after = await h.db.select().from(accelerators).where(eq(accelerators.nodeId, m.nodeId));
    expect(after.filter((r) => r.state === 'decommissioned').map((r) => r.serial)).toEqual(['GPU-7']);
    expect((await call(h, 'GET', `/v1/nodes/${m.nodeId}`)).body.version).toBe(quiet + 1);

    // Operators may not set what inventory owns.
    const refused = await call(h, 'POST', `/v1/nodes/${m.nodeId}/label`, {
      body: { set: { 'gpu.count': '8' } },
    });
    expect(refused.status).toBe(400);
  });

  it('sad: output that is not an inventory is logged and reports nothing', async () => {
    const m = await joinedMachine(h, bench, 'pool-discovery-bad');
    const discover = machineScript(m, 'discover.sh', 'echo "{\\"accelerators\\": 3}"');
    const config = machineConfig(m, `inventory: { command: ["${discover}"], every: 300ms }\n`);
    const agent = await runMachine(bench, m, m.dir, ['--config', config]);
    await agent.waitForLog(/inventory discovery .*accelerators/, 5_000);
    expect(await eventsOf(h, m.nodeId, 'node.inventory.changed')).toEqual([]);
  });
});

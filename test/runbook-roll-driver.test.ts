import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../db/schema';
import { readNode } from './support/builders';
import { useCli } from './support/cli';
import { call, eventsOf, tenantKey } from './support/fixtures';
import { useHarness } from './support/harness';
import { mostAtOnce } from './support/overlap';
import { bash, fencedBlocks, operatorEnv } from './support/runbook';
import { simulatedFleet, type SimulatedFleet } from './support/simulated-fleet';

/**
 * The driver roll-out runbook, run as an operator would: its ```bash blocks, as written, in one
 * bash with `set -euo pipefail`, against a real API and worker and simulated machines whose
 * `driver-upgrade` and `reboot` actions run (a simulated reboot comes back on a new boot id).
 */

const RUNBOOK = fileURLToPath(new URL('../docs/runbooks/roll-a-driver-upgrade.md', import.meta.url));

const h = useHarness();
const cli = useCli(h);
let fleet: SimulatedFleet;
const dir = mkdtempSync(joinPath(tmpdir(), 'drydock-runbook-roll-'));

beforeAll(async () => {
  fleet = await simulatedFleet(h, { poolId: 'pool-h100-east', count: 5, api: cli.api, rebootMs: 300 });
});
afterAll(async () => {
  await fleet?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/runbooks/roll-a-driver-upgrade.md', () => {
  const markdown = readFileSync(RUNBOOK, 'utf8');
  const runnable = fencedBlocks(markdown).filter((b) => b.lang === 'bash');

  it('has its steps in order', () => {
    expect([...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1])).toEqual([
      'Before you start',
      'Check one machine',
      'Roll the upgrade',
      'Check the rack',
    ]);
  });

  it('runs as written: the rack is upgraded two at a time and back in service on new boots; the other rack untouched', async () => {
    const [other, ...rack] = fleet.nodes as [string, ...string[]];
    for (const nodeId of rack)
      await call(h, 'POST', `/v1/nodes/${nodeId}/label`, { body: { set: { rack: 'b7' } } });
    await call(h, 'POST', `/v1/nodes/${other}/label`, { body: { set: { rack: 'b8' } } });
    const key = await tenantKey(h, 'acme', [
      'compute:nodes:read',
      'compute:nodes:drain',
      'compute:nodes:command',
    ]);
    const env = operatorEnv(dir, {
      POOL: 'pool-h100-east',
      RACK: 'b7',
      VERSION: '570-server',
      CHANGE: 'CHG-1234',
      HEALTHY_AFTER: '1s',
      DRYDOCK_API: cli.api,
      DRYDOCK_TOKEN: key.secret,
    });
    const script = ['set -euo pipefail', ...runnable.map((b) => `# runbook line ${b.line}\n${b.code}`)].join(
      '\n',
    );
    writeFileSync(joinPath(dir, 'runbook.sh'), script);
    const run = await bash(script, env, dir, 120_000);
    expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^4 nodes in rack b7$/m);
    expect(run.stdout).toMatch(/^4 nodes upgraded, 0 failed$/m);
    expect(run.stdout).toMatch(/^rack b7 of pool-h100-east on driver 570-server: 4 nodes, CHG-1234$/m);
    expect(
      readFileSync(joinPath(dir, 'roll-pool-h100-east-rack-b7', 'diagnostics-before.txt'), 'utf8'),
    ).toContain('all GPUs healthy');

    for (const nodeId of rack) {
      const upgraded = (await eventsOf(h, nodeId, 'node.command.requested')).filter(
        (e) => e.data.action === 'driver-upgrade',
      );
      expect(upgraded.map((e) => e.data.args)).toEqual([{ version: '570-server' }]);
      expect(await readNode(h, nodeId)).toMatchObject({ cordoned: false, maintenance: false });
    }
    const maintenances = await h.db.select().from(operations).where(eq(operations.kind, 'maintenance'));
    expect(maintenances.map((m) => m.nodeId).sort()).toEqual([...rack].sort());
    expect(mostAtOnce(maintenances)).toBe(2);
    expect((await eventsOf(h, other, 'node.maintenance.')).length).toBe(0);
    expect((await readNode(h, other)).cordoned).toBe(false);
  }, 150_000);
});

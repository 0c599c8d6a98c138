import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { allocations, events, operations } from '../db/schema';
import { readNode, useCli } from './support/cli';
import { allocate, call, seedNode, seedPool, tenantKey } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { mostAtOnce } from './support/overlap';
import { bash, fencedBlocks, operatorEnv, type Run } from './support/runbook';

/**
 * The rack drain runbook, run as an operator would: its ```bash blocks, as written, in one bash
 * with `set -euo pipefail`, against a real API and worker, with a tenant key. Meanwhile the owners
 * release what runs on each node being drained.
 */

const RUNBOOK = fileURLToPath(new URL('../docs/runbooks/drain-a-rack.md', import.meta.url));

const h = useHarness();
const cli = useCli(h);

const dir = mkdtempSync(joinPath(tmpdir(), 'drydock-runbook-rack-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/runbooks/drain-a-rack.md', () => {
  const markdown = readFileSync(RUNBOOK, 'utf8');
  const runnable = fencedBlocks(markdown).filter((b) => b.lang === 'bash');

  it('has its steps in order, and keeps what runs on the machines out of bash blocks', () => {
    const headings = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual([
      'Before you start',
      'Drain the rack',
      'Record what was drained',
      'Roll out the driver',
      'Put the rack back',
    ]);
    const all = runnable.map((b) => b.code).join('\n');
    expect(all).toContain('drydock pools drain "$POOL" --selector "rack=$RACK"');
    expect(all).not.toMatch(/nvidia-smi/);
  });

  it('runs as written: the rack drains two at a time, is recorded, and comes back; the other rack is untouched', async () => {
    await seedPool(h, { id: 'pool-h100-east', tenantId: 'acme' });
    const rack: string[] = [];
    for (let i = 0; i < 5; i++) {
      rack.push(
        await seedNode(h, {
          poolId: 'pool-h100-east',
          tenantId: 'acme',
          hostname: `gpu-b7-0${i}`,
          labels: { rack: 'b7' },
        }),
      );
    }
    const other = await seedNode(h, { poolId: 'pool-h100-east', tenantId: 'acme', labels: { rack: 'b8' } });
    for (const nodeId of [...rack, other]) await allocate(h, nodeId, 'acme');
    const key = await tenantKey(h, 'acme', [
      'compute:nodes:read',
      'compute:nodes:drain',
      'compute:nodes:cordon',
    ]);

    const env = operatorEnv(dir, {
      POOL: 'pool-h100-east',
      RACK: 'b7',
      CHANGE: 'CHG-1234',
      DRYDOCK_API: cli.api,
      DRYDOCK_TOKEN: key.secret,
    });
    const script = ['set -euo pipefail', ...runnable.map((b) => `# runbook line ${b.line}\n${b.code}`)].join(
      '\n',
    );
    writeFileSync(joinPath(dir, 'runbook.sh'), script);
    const running = bash(script, env, dir);
    let ended: Run | undefined;
    void running.then((run) => (ended = run));

    // The owners: whatever runs on a node being drained is released, one node at a time.
    await eventually(
      async () => {
        if (ended) return true;
        const [drain] = await h.db
          .select()
          .from(operations)
          .where(
            and(
              eq(operations.kind, 'drain'),
              eq(operations.status, 'running'),
              inArray(operations.nodeId, rack),
            ),
          );
        if (drain) {
          const held = await h.db
            .select()
            .from(allocations)
            .where(and(eq(allocations.nodeId, drain.nodeId!), isNull(allocations.releasedAt)));
          for (const a of held) await call(h, 'POST', `/v1/allocations/${a.id}/release`);
        }
        return false;
      },
      90_000,
      100,
    );
    const result = await running;
    expect(result.code, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(
      /^pool-h100-east: Succeeded: 5 drained, 0 draining, 0 pending, 0 failed\.$/m,
    );
    expect(result.stdout).toMatch(/^5 nodes drained$/m);
    expect(result.stdout).toMatch(/^rack b7 of pool-h100-east back in service: 5 nodes, CHG-1234$/m);

    // One pool drain, succeeded, with the change's key; one drain per node of the rack, never more
    // than two at once.
    const poolDrains = await h.db.select().from(operations).where(eq(operations.kind, 'pool-drain'));
    expect(poolDrains).toMatchObject([{ status: 'succeeded', idempotencyKey: 'rack-b7-CHG-1234' }]);
    const drains = await h.db.select().from(operations).where(eq(operations.kind, 'drain'));
    expect(drains.map((d) => d.nodeId).sort()).toEqual([...rack].sort());
    expect(mostAtOnce(drains)).toBeLessThanOrEqual(2);
    // Each node of the rack drained once and is back in service.
    for (const nodeId of rack) {
      expect(await readNode(h, nodeId)).toMatchObject({ cordoned: false, noScheduleReasons: [] });
      const rows = await h.db.select().from(events).where(eq(events.nodeId, nodeId)).orderBy(asc(events.id));
      expect(
        rows.map((e) => e.type).filter((t) => t !== 'allocation.released' && t !== 'allocation.created'),
      ).toEqual(['node.draining', 'node.drained', 'node.uncordoned']);
    }
    // The other rack: no drain, no control, its allocation still running.
    expect(await readNode(h, other)).toMatchObject({ cordoned: false, noScheduleReasons: [] });
    const otherEvents = await h.db.select().from(events).where(eq(events.nodeId, other));
    expect(otherEvents.map((e) => e.type).filter((t) => t.startsWith('node.'))).toEqual([]);
    expect(
      JSON.parse(readFileSync(joinPath(dir, 'drain-pool-h100-east-rack-b7', 'pool-drain.json'), 'utf8')),
    ).toMatchObject({
      operation: { kind: 'pool-drain', status: 'succeeded', result: { counts: { drained: 5, failed: 0 } } },
    });
  }, 120_000);
});

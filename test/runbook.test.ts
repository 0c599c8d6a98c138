import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { and, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import {
  accelerators,
  allocations,
  inventoryCurrent,
  inventorySnapshots,
  operations,
  schedulerEntries,
  storageRoots,
  telemetryCurrent,
} from '../db/schema';
import { createToken, join, newPublicKey } from './support/agents';
import { BIN, readNode, useCli } from './support/cli';
import { allocate, call, eventsOf, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { bash, fencedBlocks, operatorEnv, type Run } from './support/runbook';

/**
 * The decommission runbook, run as an operator would: its ```bash blocks, as written, in one bash
 * with `set -euo pipefail`, against a real API and worker. Then the seed runbook's Confirm list.
 */

const RUNBOOK = fileURLToPath(new URL('../docs/runbooks/decommission.md', import.meta.url));

const h = useHarness();
const cli = useCli(h);

const dir = mkdtempSync(joinPath(tmpdir(), 'drydock-runbook-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('docs/runbooks/decommission.md', () => {
  const markdown = readFileSync(RUNBOOK, 'utf8');
  const blocks = fencedBlocks(markdown);
  const runnable = blocks.filter((b) => b.lang === 'bash');

  it("follows the seed runbook's sections and keeps commands for the node itself out of bash blocks", () => {
    const headings = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings).toEqual(expect.arrayContaining(['Prepare', 'Preview', 'Execute', 'Confirm']));
    expect(headings.indexOf('Prepare')).toBeLessThan(headings.indexOf('Preview'));
    expect(headings.indexOf('Preview')).toBeLessThan(headings.indexOf('Execute'));
    expect(headings.indexOf('Execute')).toBeLessThan(headings.indexOf('Confirm'));
    expect(runnable.length).toBeGreaterThanOrEqual(4);
    for (const block of runnable) expect(block.code, `line ${block.line}`).not.toMatch(/drydock-agent/);
    expect(markdown).toMatch(/drydock-agent stop --data-dir/);
    const all = runnable.map((b) => b.code).join('\n');
    expect(all).toContain('drydock decommission preview "$NODE" --json > preview.json');
    expect(all).toMatch(/drydock decommission execute "\$NODE" --from-preview preview\.json --confirm/);
    // The bin the blocks call is runnable as a command, shebang and all.
    accessSync(BIN, constants.X_OK);
  });

  it('runs as written: drain, preview, execute, confirm; the node is decommissioned exactly once', async () => {
    await seedPool(h, { id: 'pool-eol', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-eol' });
    const publicKey = newPublicKey();
    // Joined through the API as the agent joins, with a display name and an inventory.
    const joined = await call(h, 'POST', '/v1/agent/join', {
      token: null,
      body: {
        token: token.secret,
        hostname: 'gpu-b7-03',
        displayName: 'GPU B7-03',
        publicKey,
        inventory: {
          accelerators: [
            { model: 'H100', serial: 'gpu-b7-03-0' },
            { model: 'H100', serial: 'gpu-b7-03-1' },
          ],
          storageRoots: [{ path: '/data', bytes: 1_000_000_000 }],
        },
      },
    });
    expect(joined.status).toBe(201);
    const nodeId: string = joined.body.nodeId;
    const credential: string = joined.body.credential;
    const beat = (state?: 'offline') =>
      call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: state ? { state } : {} });
    // The agent runs: connected, alive, with current scheduler and telemetry rows.
    expect((await beat()).status).toBe(200);
    await h.db.insert(schedulerEntries).values({ nodeId, poolId: 'pool-eol' }).onConflictDoNothing();
    await h.db
      .insert(telemetryCurrent)
      .values({ nodeId, lastHeartbeatAt: new Date(), data: { gpus: 2 } })
      .onConflictDoNothing();
    expect(
      await h.db.select().from(schedulerEntries).where(eq(schedulerEntries.nodeId, nodeId)),
    ).toHaveLength(1);
    expect(
      await h.db.select().from(telemetryCurrent).where(eq(telemetryCurrent.nodeId, nodeId)),
    ).toHaveLength(1);
    const alloc = await allocate(h, nodeId, 'acme');
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted', liveness: 'alive' });

    const env = operatorEnv(dir, {
      NODE: nodeId,
      NODE_HOSTNAME: 'gpu-b7-03',
      DRYDOCK_API: cli.api,
      DRYDOCK_TOKEN: h.operatorKey,
    });
    const script = ['set -euo pipefail', ...runnable.map((b) => `# runbook line ${b.line}\n${b.code}`)].join(
      '\n',
    );
    writeFileSync(joinPath(dir, 'runbook.sh'), script);
    const running = bash(script, env, dir);

    // What the operator and the owners do meanwhile: once the drain waits for the allocation,
    // the agent stops (goodbye: offline) and the allocation's owner releases it.
    let ended: Run | undefined;
    void running.then((run) => (ended = run));
    await eventually(async () => {
      if (ended) throw new Error(`the runbook ended early:\n${ended.stdout}\n${ended.stderr}`);
      const ops = await call(h, 'GET', `/v1/operations?nodeId=${nodeId}`);
      const drain = ops.body.items.find((op: { kind: string }) => op.kind === 'drain');
      if (!drain) return undefined;
      const read = await call(h, 'GET', `/v1/operations/${drain.id}`);
      return read.body.progress?.phase === 'waiting';
    }, 30_000);
    expect((await beat('offline')).status).toBe(200);
    expect((await call(h, 'POST', `/v1/allocations/${alloc}/release`)).status).toBe(200);

    const result = await running;
    expect(result.code, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/^Confirm as:\s+node_\S+, gpu-b7-03, "GPU B7-03"$/m);
    expect(result.stdout).toMatch(new RegExp(`^decommission (op_[0-9a-z]{26}) succeeded at `, 'm'));
    const opId = /^decommissioned: \S+ \(gpu-b7-03\), operation (op_[0-9a-z]{26})$/m.exec(result.stdout)?.[1];
    expect(opId, result.stdout).toBeDefined();

    // Confirm, as the seed runbook lists it.
    // Node status and liveness decommissioned, all eligibility false, current inventory empty.
    expect(await readNode(h, nodeId)).toMatchObject({
      provisionState: 'decommissioned',
      liveness: 'decommissioned',
      connectivity: 'disconnected',
      cordoned: true,
      access: 'blocked',
    });
    expect(await h.db.select().from(inventoryCurrent).where(eq(inventoryCurrent.nodeId, nodeId))).toEqual([]);

    // Old node credentials get 401; ordinary re-enrollment with the old identity is refused.
    expect((await beat()).status).toBe(401);
    expect((await call(h, 'GET', '/v1/agent/commands?wait=0', { token: credential })).status).toBe(401);
    const rejoin = await join(h, { token: token.secret, hostname: 'gpu-b7-03', publicKey });
    expect(rejoin.status).toBe(401);

    // Scheduler and current telemetry rows gone, accelerators decommissioned, storage not writable.
    expect(await h.db.select().from(schedulerEntries).where(eq(schedulerEntries.nodeId, nodeId))).toEqual([]);
    expect(await h.db.select().from(telemetryCurrent).where(eq(telemetryCurrent.nodeId, nodeId))).toEqual([]);
    const accs = await h.db.select().from(accelerators).where(eq(accelerators.nodeId, nodeId));
    expect(accs.map((a) => a.state)).toEqual(['decommissioned', 'decommissioned']);
    const roots = await h.db.select().from(storageRoots).where(eq(storageRoots.nodeId, nodeId));
    expect(roots.map((r) => r.state)).toEqual(['read_only']);

    // History still reads back: inventory snapshots, allocations, operations, events.
    expect(
      await h.db.select().from(inventorySnapshots).where(eq(inventorySnapshots.nodeId, nodeId)),
    ).toHaveLength(1);
    expect(await h.db.select().from(allocations).where(eq(allocations.nodeId, nodeId))).toHaveLength(1);
    const ops = await call(h, 'GET', `/v1/operations?nodeId=${nodeId}`);
    expect(ops.body.items.map((op: { kind: string }) => op.kind).sort()).toEqual(['decommission', 'drain']);
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(
      expect.arrayContaining(['node.connected', 'node.draining', 'node.drained', 'node.decommissioned']),
    );

    // Exactly one node.decommissioned event and one decommission operation, succeeded.
    const decommissioned = await eventsOf(h, nodeId, 'node.decommissioned');
    expect(decommissioned).toMatchObject([
      {
        operationId: opId,
        reason: 'EOL: hardware leaving the fleet',
        data: { operator: 'alice' },
      },
    ]);
    const decommissions = await h.db
      .select()
      .from(operations)
      .where(and(eq(operations.nodeId, nodeId), eq(operations.kind, 'decommission')));
    expect(decommissions).toMatchObject([{ id: opId, status: 'succeeded' }]);
    expect(decommissions[0]!.idempotencyKey).toMatch(/^dd-[0-9a-f]{32}$/);

    // decommissioned_nodes_are_terminal: controls are refused, the node stays as it is.
    const before = await readNode(h, nodeId);
    for (const control of ['cordon', 'uncordon', 'adopt']) {
      const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/${control}`, { body: {} });
      expect(reply, control).toMatchObject({ status: 409, body: { error: { code: 'INVALID_STATE' } } });
    }
    expect(await readNode(h, nodeId)).toEqual(before);

    // The evidence files are where the runbook says.
    const evidence = joinPath(dir, `decommission-${nodeId}`);
    expect(JSON.parse(readFileSync(joinPath(evidence, 'operation.json'), 'utf8'))).toMatchObject({
      id: opId,
      status: 'succeeded',
    });
    expect(JSON.parse(readFileSync(joinPath(evidence, 'preview.json'), 'utf8'))).toMatchObject({
      nodeId,
      ready: true,
    });
  });
});

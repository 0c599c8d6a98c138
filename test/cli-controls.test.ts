import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { nodeLabels, nodes } from '../db/schema';
import { line, readNode, rows, useCli, type Refusal } from './support/cli';
import { call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness();
const cli = useCli(h);
const { drydock } = cli;

const NODE = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';

describe('drydock nodes taint', () => {
  it('adds and removes taints, as the API JSON and as a sentence; a stale --if-version is exit 3', async () => {
    await seedPool(h, { id: 'pool-taint', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-taint', tenantId: 'acme', hostname: 'gpu-t-01' });

    const added = await drydock(
      line('nodes taint', id, { add: 'rma-pending,dedicated=acme', reason: 'rma', json: true }),
    );
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(added.stdout)).toMatchObject({
      id,
      version: 2,
      noScheduleReasons: ['taint:rma-pending', 'taint:dedicated=acme'],
    });

    const [removed, stale] = await Promise.all([
      drydock(['nodes', 'taint', id, '--remove', 'rma-pending', '--if-version', '2']),
      drydock(['nodes', 'taint', id, '--add', 'other', '--if-version', '1']),
    ]);
    expect(removed).toMatchObject({ code: 0, stderr: '' });
    expect(removed.stdout).toBe(`gpu-t-01 (${id}): taints dedicated=acme, version 3\n`);
    expect(stale).toMatchObject({ code: 3, stdout: '' });
    expect(stale.stderr).toMatch(/^error: CONFLICT: node changed since version 1/);

    expect((await readNode(h, id)).noScheduleReasons).toEqual(['taint:dedicated=acme']);
    expect(await eventsOf(h, id)).toMatchObject([
      { type: 'node.tainted', reason: 'rma' },
      { type: 'node.tainted', reason: null },
    ]);
  });
});

describe('drydock nodes label', () => {
  it('sets and removes operator labels and shows them; an inventory label is refused by the API', async () => {
    await seedPool(h, { id: 'pool-label', tenantId: 'acme' });
    const id = await seedNode(h, {
      poolId: 'pool-label',
      tenantId: 'acme',
      hostname: 'gpu-l-01',
      labels: { rack: 'a1', 'burn-in': 'yes' },
    });
    await h.db
      .insert(nodeLabels)
      .values({ nodeId: id, key: 'gpu.model', value: 'h100', source: 'inventory' });

    const [set, owned] = await Promise.all([
      drydock(
        line('nodes label', id, {
          set: 'rack=b7,fabric/rail=3,note=a=b,empty=',
          remove: 'burn-in',
          reason: 'recabled',
        }),
      ),
      drydock(['nodes', 'label', id, '--set', 'gpu.model=a100']),
    ]);
    expect(set).toMatchObject({ code: 0, stderr: '' });
    const [first, ...table] = set.stdout.trimEnd().split('\n');
    expect(first).toBe(`gpu-l-01 (${id}): version 2`);
    expect(table[0]!.split(/\s+/)).toEqual(['KEY', 'VALUE', 'SOURCE']);
    expect(table.slice(1).map((line) => line.split(/\s+/))).toEqual([
      ['empty', '""', 'operator'],
      ['fabric/rail', '3', 'operator'],
      ['gpu.model', 'h100', 'inventory'],
      ['note', 'a=b', 'operator'],
      ['rack', 'b7', 'operator'],
    ]);

    expect(owned).toMatchObject({ code: 1, stdout: '' });
    expect(owned.stderr).toBe(
      'error: INVALID_INPUT: these labels belong to inventory or the system: gpu.model (inventory)\n',
    );

    const removed = await drydock(['nodes', 'label', id, '--remove', 'fabric/rail,note,gpu.model', '--json']);
    expect(removed.code).toBe(0);
    const node = JSON.parse(removed.stdout);
    expect(node).toMatchObject({ id, version: 3 });
    expect(node.labels).toEqual([
      { key: 'empty', value: '', source: 'operator' },
      { key: 'gpu.model', value: 'h100', source: 'inventory' },
      { key: 'rack', value: 'b7', source: 'operator' },
    ]);
    expect(await eventsOf(h, id)).toMatchObject([
      { type: 'node.labeled', reason: 'recabled' },
      { type: 'node.labeled', reason: null },
    ]);
  });
});

describe('drydock usage errors of the node controls', () => {
  it('refuses bad keys, missing flags and a missing --yes with exit 2 before sending anything', async () => {
    const lines: Refusal[] = [
      [
        ['nodes', 'taint', NODE, '--add', 'ok,bad key!'],
        "--add: 'bad key!' is not a taint key: a taint key is 1–128 of letters, digits and . _ / = : -",
      ],
      [
        ['nodes', 'taint', NODE, '--add', 'rma,gpu-3', '--remove', 'gpu-3'],
        'a key cannot be added and removed at once: gpu-3',
      ],
      [['nodes', 'taint', NODE, '--reason', 'x'], 'give --add or --remove (or both)'],
      [
        ['nodes', 'taint', NODE, '--add', Array.from({ length: 33 }, (_, i) => `k${i}`).join(',')],
        '--add takes at most 32 items; got 33',
      ],
      [['nodes', 'label', NODE, '--set', 'rack'], "--set: 'rack' must be KEY=VALUE"],
      [
        ['nodes', 'label', NODE, '--remove', 'drydock.dev/owner'],
        "--remove: 'drydock.dev/owner' is under drydock.dev/, which Drydock reserves",
      ],
      [['nodes', 'label', NODE, '--set', 'rack=b7,rack=b8'], '--set names rack twice'],
      [['nodes', 'label', NODE], 'give --set or --remove (or both)'],
      [['nodes', 'delete', NODE, '--reason', 'eol'], 'nodes delete removes for good; re-run with --yes'],
      [['nodes', 'adopt', NODE, '--if-version', '0'], "--if-version must be a whole number ≥ 1; got '0'"],
      [
        ['pools', 'capacity', 'Pool_1'],
        "POOL must be 1–63 of a-z 0-9 -, starting with a letter, got 'Pool_1'",
      ],
    ];
    await cli.refuses(lines);
  });
});

describe('drydock nodes maintenance clear and adopt', () => {
  it('clears maintenance set by the system, and adopts an adopted node again', async () => {
    await seedPool(h, { id: 'pool-maint', tenantId: 'acme' });
    const inMaintenance = await seedNode(h, { poolId: 'pool-maint', hostname: 'gpu-m-01' });
    const adopted = await seedNode(h, { poolId: 'pool-maint', hostname: 'gpu-a-01' });
    await h.db.update(nodes).set({ maintenance: true }).where(eq(nodes.id, inMaintenance));

    const [cleared, readopted] = await Promise.all([
      drydock(['nodes', 'maintenance', 'clear', inMaintenance, '--reason', 'fixed', '--if-version', '1']),
      drydock(['nodes', 'adopt', adopted, '--reason', 'new firmware', '--json']),
    ]);
    expect(cleared).toMatchObject({ code: 0, stderr: '' });
    expect(cleared.stdout).toBe(`gpu-m-01 (${inMaintenance}): maintenance off, version 2\n`);
    expect((await readNode(h, inMaintenance)).maintenance).toBe(false);
    expect(await eventsOf(h, inMaintenance)).toMatchObject([
      { type: 'node.maintenance.cleared', reason: 'fixed' },
    ]);

    expect(readopted).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(readopted.stdout)).toMatchObject({
      id: adopted,
      provisionState: 'adopted',
      version: 3,
    });
    expect((await eventsOf(h, adopted)).map((e) => e.type)).toEqual(['node.adopting', 'node.adopted']);
  });
});

describe('drydock nodes delete', () => {
  it('needs --yes, refuses an uncordoned adopted node, deletes a cordoned one, and says so on retry', async () => {
    await seedPool(h, { id: 'pool-delete', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-delete', tenantId: 'acme', hostname: 'gpu-x-01' });

    const unconfirmed = await drydock(['nodes', 'delete', id]);
    expect(unconfirmed).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "error: usage: nodes delete removes for good; re-run with --yes\nrun 'drydock nodes delete --help' for usage\n",
    });

    const uncordoned = await drydock(['nodes', 'delete', id, '--yes']);
    expect(uncordoned).toMatchObject({ code: 3, stdout: '' });
    expect(uncordoned.stderr).toBe(
      'error: INVALID_STATE: Cordon the adopted node first, then delete it once it holds nothing\n',
    );
    expect(await readNode(h, id)).toMatchObject({ deletedAt: null, version: 1 });
    expect(await eventsOf(h, id)).toEqual([]);

    expect((await drydock(['nodes', 'cordon', id])).code).toBe(0);
    const deleted = await drydock(['nodes', 'delete', id, '--yes', '--reason', 'eol', '--if-version', '2']);
    expect(deleted).toEqual({ code: 0, stdout: `deleted ${id}\n`, stderr: '' });

    const [again, againJson, listed, withDeleted, withDeletedJson] = await Promise.all([
      drydock(['nodes', 'delete', id, '--yes']),
      drydock(['nodes', 'delete', id, '--yes', '--json']),
      drydock(['nodes', 'list', '--pool', 'pool-delete']),
      drydock(['nodes', 'list', '--pool', 'pool-delete', '--include-deleted']),
      drydock(['nodes', 'list', '--pool', 'pool-delete', '--include-deleted', '--json']),
    ]);
    expect(again).toEqual({ code: 0, stdout: `${id} was already deleted\n`, stderr: '' });
    expect(JSON.parse(againJson.stdout)).toEqual({ nodeId: id, deleted: false });
    expect(listed).toEqual({ code: 0, stdout: '', stderr: 'no nodes match\n' });
    expect(withDeleted.code).toBe(0);
    expect(rows(withDeleted.stdout).map((line) => line.split(/\s+/).slice(0, 4))).toEqual([
      [id, 'gpu-x-01', 'pool-delete', 'deleted'],
    ]);
    const [item] = JSON.parse(withDeletedJson.stdout).items;
    expect(item).toMatchObject({ id, provisionState: 'adopted', cordoned: true });
    expect(item.deletedAt).toEqual(expect.any(String));

    expect(await eventsOf(h, id)).toMatchObject([
      { type: 'node.cordoned' },
      { type: 'node.deleted', reason: 'eol' },
    ]);
  });
});

describe('drydock pools', () => {
  it('lists and shows pools, and counts live nodes per capacity bucket', async () => {
    await seedPool(h, { id: 'pool-cap', tenantId: 'acme', grants: ['globex'] });
    const ids = await Promise.all(
      ['sched', 'maint', 'lost', 'cord', 'taint', 'gone'].map((name) =>
        seedNode(h, { poolId: 'pool-cap', tenantId: 'acme', hostname: `gpu-${name}` }),
      ),
    );
    const [, maint, lost, cord, tainted, gone] = ids as [string, string, string, string, string, string];
    await h.db.update(nodes).set({ maintenance: true }).where(eq(nodes.id, maint));
    await h.db.update(nodes).set({ liveness: 'unreachable' }).where(eq(nodes.id, lost));
    await h.db.update(nodes).set({ deletedAt: new Date() }).where(eq(nodes.id, gone));
    await call(h, 'POST', `/v1/nodes/${cord}/cordon`);
    await call(h, 'POST', `/v1/nodes/${tainted}/taint`, { body: { add: ['rma-pending'] } });

    const [capacity, capacityJson, list, show, missing] = await Promise.all([
      drydock(['pools', 'capacity', 'pool-cap']),
      drydock(['pools', 'capacity', 'pool-cap', '--json']),
      drydock(['pools', 'list']),
      drydock(['pools', 'show', 'pool-cap']),
      drydock(['pools', 'capacity', 'pool-nowhere']),
    ]);

    expect(capacity).toMatchObject({ code: 0, stderr: '' });
    expect(
      capacity.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/\s+/)),
    ).toEqual([
      ['BUCKET', 'NODES'],
      ['maintenance', '1'],
      ['unreachable', '1'],
      ['cordoned', '1'],
      ['unhealthy', '1'],
      ['schedulable', '1'],
      ['total', '5'],
    ]);
    expect(JSON.parse(capacityJson.stdout)).toEqual({
      poolId: 'pool-cap',
      total: 5,
      buckets: { maintenance: 1, unreachable: 1, cordoned: 1, unhealthy: 1, schedulable: 1 },
    });

    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(list.stdout.split('\n')[0]!.split(/\s+/)).toEqual(['ID', 'KIND', 'SITE', 'TENANT', 'GRANTS']);
    expect(rows(list.stdout).map((line) => line.split(/\s+/))).toContainEqual([
      'pool-cap',
      'bare-metal',
      'fra1',
      'acme',
      'globex',
    ]);

    expect(show).toMatchObject({ code: 0, stderr: '' });
    expect(show.stdout).toMatch(/^ID:\s+pool-cap$/m);
    expect(show.stdout).toMatch(/^Tenant:\s+acme$/m);
    expect(show.stdout).toMatch(/^Grants:\s+globex$/m);

    expect(missing).toMatchObject({ code: 4, stdout: '' });
    expect(missing.stderr).toBe('error: NOT_FOUND: pool pool-nowhere not found\n');
  });
});

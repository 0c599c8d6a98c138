import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { operationWhen } from './support/builders';
import { BIN, OPERATION_READ, readNode, rows, useCli, type Refusal } from './support/cli';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { answered, answeredMore } from './support/witnesses';

const h = useHarness();
const cli = useCli(h);
const { drydock } = cli;

const node = (id: string) => readNode(h, id);

describe('drydock nodes list', () => {
  it('prints a table, the API JSON with --json, and passes the filters', async () => {
    await seedPool(h, { id: 'pool-list', tenantId: 'acme' });
    await seedPool(h, { id: 'pool-other', tenantId: 'globex' });
    const a = await seedNode(h, { poolId: 'pool-list', tenantId: 'acme', hostname: 'gpu-list-01' });
    const b = await seedNode(h, { poolId: 'pool-list', tenantId: 'acme', hostname: 'gpu-list-02' });
    await seedNode(h, { poolId: 'pool-other', tenantId: 'globex', hostname: 'gpu-other-01' });
    await call(h, 'POST', `/v1/nodes/${b}/cordon`, { body: { reason: 'rma' } });

    const [table, cordoned, paged, firstPage] = await Promise.all([
      drydock(['nodes', 'list', '--pool', 'pool-list']),
      drydock(['--json', 'nodes', 'list', '--tenant', 'acme', '--cordoned']),
      drydock(['nodes', 'list', '--pool', 'pool-list', '--limit', '1', '--all', '--json']),
      drydock(['nodes', 'list', '--pool', 'pool-list', '--limit', '1']),
    ]);

    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(table.stdout.split('\n')[0]!.split(/\s+/)).toEqual([
      'ID',
      'HOSTNAME',
      'POOL',
      'STATE',
      'CORDONED',
      'REASONS',
      'LIVENESS',
      'VERSION',
    ]);
    const [first, second] = rows(table.stdout).map((line) => line.split(/\s+/));
    expect(rows(table.stdout)).toHaveLength(2);
    const byId = new Map([first!, second!].map((cells) => [cells[0], cells]));
    expect(byId.get(a)).toEqual([a, 'gpu-list-01', 'pool-list', 'adopted', 'no', '-', 'alive', '1']);
    expect(byId.get(b)).toEqual([b, 'gpu-list-02', 'pool-list', 'adopted', 'yes', '-', 'alive', '2']);

    expect(cordoned.code).toBe(0);
    const body = JSON.parse(cordoned.stdout);
    expect(body.items.map((n: { id: string }) => n.id)).toEqual([b]);
    expect(body.nextCursor).toBeNull();
    expect(body.items[0]).toMatchObject({ hostname: 'gpu-list-02', cordoned: true, tenantId: 'acme' });

    expect(paged.code).toBe(0);
    const all = JSON.parse(paged.stdout);
    expect(all.items.map((n: { id: string }) => n.id).sort()).toEqual([a, b].sort());
    expect(all.nextCursor).toBeNull();

    expect(firstPage.code).toBe(0);
    expect(rows(firstPage.stdout)).toHaveLength(1);
    expect(firstPage.stderr).toContain('add --all');
  });

  it('finds nodes by hostname and by label selector, and refuses a bad selector before calling', async () => {
    await seedPool(h, { id: 'pool-find', tenantId: 'acme' });
    const b7 = await seedNode(h, {
      poolId: 'pool-find',
      tenantId: 'acme',
      hostname: 'GPU-Find-b7-01',
      labels: { rack: 'b7', gpu: 'h100' },
    });
    const b8 = await seedNode(h, {
      poolId: 'pool-find',
      tenantId: 'acme',
      hostname: 'gpu-find-b8-01',
      labels: { rack: 'b8', gpu: 'h100' },
    });
    const ids = (run: { stdout: string }) =>
      (JSON.parse(run.stdout).items as { id: string }[]).map((n) => n.id).sort();

    const [byHost, byLabels, both, bad] = await Promise.all([
      drydock(['--json', 'nodes', 'list', '--hostname', 'find-B7']),
      drydock(['--json', 'nodes', 'list', '--selector', 'gpu=h100', '--pool', 'pool-find']),
      drydock(['--json', 'nodes', 'list', '--selector', 'rack=b8,gpu=h100', '--hostname', 'gpu-find']),
      drydock(['nodes', 'list', '--selector', 'rack']),
    ]);
    expect(ids(byHost)).toEqual([b7]);
    expect(ids(byLabels)).toEqual([b7, b8].sort());
    expect(ids(both)).toEqual([b8]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--selector');
  });
});

describe('drydock nodes show and events', () => {
  it('shows a node, in words and as the API JSON', async () => {
    await seedPool(h, { id: 'pool-show', tenantId: 'acme' });
    const id = await seedNode(h, {
      poolId: 'pool-show',
      tenantId: 'acme',
      hostname: 'gpu-show-01',
      labels: { rack: 'b7' },
    });
    const [human, json] = await Promise.all([
      drydock(['nodes', 'show', id]),
      drydock(['nodes', 'show', id, '--json']),
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^ID:\\s+${id}$`, 'm'));
    expect(human.stdout).toMatch(/^Hostname:\s+gpu-show-01$/m);
    expect(human.stdout).toMatch(/^Labels:\s+rack=b7$/m);
    expect(human.stdout).toMatch(/^Cordoned:\s+no$/m);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(await node(id));
  });

  it('lists events filtered by type prefix, and --follow prints new ones as they come', async () => {
    await seedPool(h, { id: 'pool-events', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-events', tenantId: 'acme' });
    await call(h, 'POST', `/v1/nodes/${id}/cordon`, { body: { reason: 'first look' } });
    await call(h, 'POST', `/v1/nodes/${id}/uncordon`);

    const env = { ...process.env, DRYDOCK_API: cli.api, DRYDOCK_TOKEN: h.operatorKey };
    const follower = spawn(process.execPath, [BIN, 'nodes', 'events', id, '--follow', '--json'], { env });
    let followed = '';
    follower.stdout.on('data', (chunk: Buffer) => (followed += chunk.toString()));
    const followedTypes = () =>
      followed
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { type: string }).type);

    try {
      const [cordons, json] = await Promise.all([
        drydock(['nodes', 'events', id, '--type', 'node.cordon']),
        drydock(['nodes', 'events', id, '--json']),
      ]);
      expect(cordons.code).toBe(0);
      expect(rows(cordons.stdout)).toHaveLength(1);
      expect(cordons.stdout).toContain('node.cordoned');
      expect(cordons.stdout).toContain('first look');
      expect(cordons.stdout).not.toContain('node.uncordoned');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout).items.map((e: { type: string }) => e.type)).toEqual([
        'node.cordoned',
        'node.uncordoned',
      ]);

      await eventually(async () => followedTypes().length === 2);
      await call(h, 'POST', `/v1/nodes/${id}/cordon`, { body: { reason: 'second look' } });
      await eventually(async () => followedTypes().length === 3, 5_000);
      expect(followedTypes()).toEqual(['node.cordoned', 'node.uncordoned', 'node.cordoned']);
    } finally {
      follower.kill();
    }
  });
});

describe('drydock nodes cordon and uncordon', () => {
  it('refuses a stale --if-version with exit 3 and changes nothing; a current one goes through', async () => {
    await seedPool(h, { id: 'pool-cordon', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-cordon', tenantId: 'acme', hostname: 'gpu-c-01' });
    const before = await node(id);

    const stale = await drydock(['nodes', 'cordon', id, '--reason', 'psu', '--if-version', '7']);
    expect(stale.code).toBe(3);
    expect(stale.stdout).toBe('');
    expect(stale.stderr).toMatch(/^error: CONFLICT: /);
    expect(await node(id)).toEqual(before);
    expect(await eventsOf(h, id)).toEqual([]);

    const cordoned = await drydock([
      'nodes',
      'cordon',
      id,
      '--reason',
      'psu',
      `--if-version=${before.version}`,
    ]);
    expect(cordoned).toMatchObject({ code: 0, stderr: '' });
    expect(cordoned.stdout).toBe(`gpu-c-01 (${id}): cordoned, version ${before.version + 1}\n`);
    expect(await eventsOf(h, id)).toMatchObject([{ type: 'node.cordoned', reason: 'psu' }]);

    const uncordoned = await drydock(['nodes', 'uncordon', id, '--json']);
    expect(uncordoned.code).toBe(0);
    expect(JSON.parse(uncordoned.stdout)).toMatchObject({ id, cordoned: false, version: before.version + 2 });
  });
});

describe('drydock nodes drain and operations show', () => {
  it('drain --wait blocks until the last allocation is released, then exits 0', async () => {
    await seedPool(h, { id: 'pool-drain', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-drain', tenantId: 'acme', hostname: 'gpu-d-01' });
    const alloc = await allocate(h, id, 'acme');

    let settled = false;
    const running = drydock(['nodes', 'drain', id, '--reason', 'replace PSU', '--wait', '--timeout', '1m']);
    void running.then(() => (settled = true));
    const opId = await eventually(async () => {
      const ops = await call(h, 'GET', `/v1/operations?nodeId=${id}`);
      const op = ops.body.items[0];
      if (!op) return undefined;
      const read = await call(h, 'GET', `/v1/operations/${op.id}`);
      return read.body.progress?.phase === 'waiting' ? (op.id as string) : undefined;
    });
    // The command is still waiting: it read the waiting drain twice more, and nothing ends it but the release.
    await answeredMore(cli.api, OPERATION_READ, await answered(cli.api, OPERATION_READ), 2);
    expect((await call(h, 'GET', `/v1/operations/${opId}`)).body.status).toBe('running');
    expect(settled).toBe(false);
    expect((await call(h, 'POST', `/v1/allocations/${alloc}/release`)).status).toBe(200);

    const result = await running;
    expect(result.code).toBe(0);
    // The 202's operation, recorded and not yet begun by a worker; no progress lines (no terminal).
    expect(result.stderr).toBe(`gpu-d-01 (${id}): drain ${opId} pending; waiting\n`);
    expect(result.stdout).toMatch(new RegExp(`^drain ${opId} succeeded at \\S+\\n$`));
    expect((await eventsOf(h, id)).map((e) => e.type)).toEqual(['node.draining', 'node.drained']);
  });

  it('drain --wait gives up at --timeout with exit 1; operations show reports it and its end', async () => {
    await seedPool(h, { id: 'pool-drain', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-drain', tenantId: 'acme' });
    await allocate(h, id, 'acme');

    const timedOut = await drydock(['nodes', 'drain', id, '--wait', '--timeout', '2s', '--json']);
    expect(timedOut.code).toBe(1);
    expect(timedOut.stdout).toBe('');
    const opId = /(op_[0-9a-z]{26})/.exec(timedOut.stderr)?.[1];
    // Still pending when no worker began it within the 2 s (a loaded machine), else running.
    expect(timedOut.stderr).toMatch(
      /^error: TIMEOUT: drain op_\S+ still (pending|running) after 2s; it goes on — follow it with: drydock operations show op_\S+ --wait\n$/,
    );
    await operationWhen(h, opId!, (op) => op.progress.phase === 'waiting');

    const [human, json] = await Promise.all([
      drydock(['operations', 'show', opId!]),
      drydock(['operations', 'show', opId!, '--json']),
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^Status:\s+running$/m);
    expect(human.stdout).toMatch(
      /^Progress:\s+Waiting for 1 live allocation to end; no deadline\. Next look \d\d:\d\dZ\.$/m,
    );
    expect(JSON.parse(json.stdout)).toMatchObject({ id: opId, kind: 'drain', nodeId: id, status: 'running' });

    const reads = await answered(cli.api, OPERATION_READ);
    const waiting = drydock(['operations', 'show', opId!, '--wait']);
    // It has shown the running drain and read it again: it waits.
    await answeredMore(cli.api, OPERATION_READ, reads, 2);
    await call(h, 'POST', `/v1/nodes/${id}/uncordon`);
    const cancelled = await waiting;
    expect(cancelled.code).toBe(1);
    expect(cancelled.stdout).toMatch(new RegExp(`^drain ${opId} cancelled`));
    expect(cancelled.stderr).toBe(`error: OPERATION_CANCELLED: drain ${opId} was cancelled\n`);
  });

  it('drain without --wait prints the operation; --idempotency-key returns the same one again', async () => {
    await seedPool(h, { id: 'pool-drain', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-drain', tenantId: 'acme' });
    await allocate(h, id, 'acme');
    const args = ['nodes', 'drain', id, '--reason', 'rma', '--idempotency-key', 'cli-drain-0001', '--json'];
    const first = await drydock(args);
    const again = await drydock(args);
    expect(first.code).toBe(0);
    expect(again.code).toBe(0);
    const started = JSON.parse(first.stdout);
    // Answered as recorded: pending until a worker begins it.
    expect(started.operation).toMatchObject({ status: 'pending', idempotencyKey: 'cli-drain-0001' });
    expect(started.node).toMatchObject({ id, cordoned: true, noScheduleReasons: ['draining'] });
    expect(JSON.parse(again.stdout).operation.id).toBe(started.operation.id);
  });
});

describe('drydock nodes drain --deadline', () => {
  it('releases what is left at the deadline, and says why it refuses a deadline', async () => {
    await seedPool(h, { id: 'pool-drain-dl', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-drain-dl', tenantId: 'acme', hostname: 'gpu-dl-01' });
    const alloc = await allocate(h, id, 'acme');
    const refused = await drydock(['nodes', 'drain', id, '--deadline', 'yesterday']);
    expect(refused.code).not.toBe(0);
    // Refused by the CLI before anything is sent.
    expect(refused.stderr).toMatch(/--deadline must be an RFC 3339 time within 30 days/);
    expect(await eventsOf(h, id)).toEqual([]);

    const drained = await drydock(['nodes', 'drain', id, '--deadline', '0s', '--wait', '--timeout', '1m']);
    expect(drained.code).toBe(0);
    expect(drained.stdout).toMatch(/^drain op_\S+ succeeded at \S+\n$/);
    expect((await call(h, 'GET', `/v1/allocations/${alloc}`)).body).toMatchObject({
      releasedBy: 'system:drain',
    });
  });
});

describe('drydock usage errors and failures', () => {
  it('refuses a bad line with exit 2 before sending anything', async () => {
    const node = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    const lines: Refusal[] = [
      [
        ['nodes', 'show', 'gpu-b7-03'],
        "NODE must look like node_ followed by 26 lowercase ULID characters, got 'gpu-b7-03'",
      ],
      [['nodes', 'list', '--colour'], "unknown flag '--colour'"],
      [
        ['nodes', 'cordon', node, '--if-version', 'seven'],
        "--if-version must be a whole number ≥ 1; got 'seven'",
      ],
      [
        ['nodes', 'drain', node, '--wait', '--timeout', 'soon'],
        "--timeout must be a duration such as 90s, 10m or 2h; got 'soon'",
      ],
      [['operations', 'show', 'node_01k5w8v3x9q2m4n6p8r0s2t4v6'], 'OP must look like op_'],
      [['nodes', 'drain'], 'missing NODE'],
    ];
    await cli.refuses(lines);
  });

  it('maps UNAUTHENTICATED to 5, NOT_FOUND to 4 and an unreachable API to 1', async () => {
    await seedPool(h, { id: 'pool-sec', tenantId: 'acme' });
    const id = await seedNode(h, { poolId: 'pool-sec', tenantId: 'acme' });
    const globex = await tenantKey(h, 'globex', ['compute:nodes:read', 'compute:nodes:cordon']);

    const [wrongToken, noToken, hidden, hiddenCordon, unreachable] = await Promise.all([
      drydock(['nodes', 'list'], { token: 'not-a-real-key' }),
      drydock(['nodes', 'list'], { token: null }),
      drydock(['nodes', 'show', id], { token: globex.secret }),
      drydock(['nodes', 'cordon', id], { token: globex.secret }),
      drydock(['nodes', 'show', id], { api: cli.deadApi }),
    ]);
    expect(wrongToken).toMatchObject({ code: 5, stdout: '' });
    expect(wrongToken.stderr).toBe('error: UNAUTHENTICATED: unknown or revoked credential\n');
    expect(noToken.code).toBe(5);
    expect(noToken.stderr).toContain('pass --token SECRET or set DRYDOCK_TOKEN');
    expect(hidden).toMatchObject({ code: 4, stdout: '' });
    expect(hidden.stderr).toMatch(/^error: NOT_FOUND: /);
    expect(hiddenCordon.code).toBe(4);
    expect((await node(id)).cordoned).toBe(false);
    expect(unreachable).toMatchObject({ code: 1, stdout: '' });
    expect(unreachable.stderr).toBe(
      `error: UNREACHABLE: cannot reach the Drydock API at ${cli.deadApi} (ECONNREFUSED); pass --api URL or set DRYDOCK_API\n`,
    );
  });
});

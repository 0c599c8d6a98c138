import { describe, expect, it } from 'vitest';
import { createToken, join, joinedNode } from './support/agents';
import { line, readNode, rows, useCli, type Refusal } from './support/cli';
import { call, eventsOf, seedPool, tenantKey } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);
const { drydock } = cli;

const NODE = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';

/** The cells of a human table row, split where two or more spaces separate them. */
const cells = (line: string) => line.split(/ {2,}/);

/** A node credential on an agent route: 200, or 401/403 once it is refused. */
const heartbeat = async (credential: string) =>
  (await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: {} })).status;

describe('drydock token create, list and revoke', () => {
  it('creates a token and shows its secret once; list never shows secrets; a revoked token admits no join', async () => {
    await seedPool(h, { id: 'pool-tok', tenantId: 'acme' });
    const before = Date.now();
    const [human, json, wrongTenant, noPool] = await Promise.all([
      drydock(
        line('token create', {
          pool: 'pool-tok',
          tenant: 'acme',
          ttl: '24h',
          'max-uses': 5,
          label: ['team=data', 'rack=b7,site=fra1'],
          description: 'data team laptops',
        }),
      ),
      drydock(['token', 'create', '--pool', 'pool-tok', '--ttl', '0', '--max-uses', '0', '--json']),
      drydock(line('token create', { pool: 'pool-tok', tenant: 'globex', ttl: '1h', 'max-uses': 1 })),
      drydock(['token', 'create', '--pool', 'pool-nowhere', '--ttl', '1h', '--max-uses', '1']),
    ]);

    expect(human).toMatchObject({ code: 0, stderr: '' });
    const id = /^ID:\s+(jt_[0-9a-z]{26})$/m.exec(human.stdout)?.[1];
    const secret = /^Secret:\s+(\S+)$/m.exec(human.stdout)?.[1];
    expect(id).toBeDefined();
    expect(secret).toMatch(/^ddj_/);
    expect(human.stdout).toMatch(/^Pool:\s+pool-tok$/m);
    expect(human.stdout).toMatch(/^Tenant:\s+acme$/m);
    expect(human.stdout).toMatch(/^Uses:\s+0\/5$/m);
    expect(human.stdout).toMatch(/^Labels:\s+(?=.*team=data)(?=.*rack=b7)(?=.*site=fra1).*$/m);
    expect(human.stdout).toMatch(/^Description:\s+data team laptops$/m);
    expect(human.stdout).toContain('The secret is shown only this once');
    const expires = Date.parse(/^Expires:\s+(\S+)$/m.exec(human.stdout)![1]!);
    expect(expires - before).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);

    expect(json).toMatchObject({ code: 0, stderr: '' });
    const unlimited = JSON.parse(json.stdout);
    expect(unlimited).toMatchObject({
      id: expect.stringMatching(/^jt_/),
      poolId: 'pool-tok',
      tenantId: 'acme',
      maxUses: 0,
      uses: 0,
      usesLeft: null,
      expiresAt: null,
      revokedAt: null,
      secret: expect.stringMatching(/^ddj_/),
    });

    expect(wrongTenant).toMatchObject({ code: 1, stdout: '' });
    expect(wrongTenant.stderr).toBe('error: INVALID_INPUT: pool pool-tok belongs to acme, not globex\n');
    expect(noPool).toMatchObject({ code: 4, stdout: '' });
    expect(noPool.stderr).toBe('error: NOT_FOUND: pool pool-nowhere not found\n');

    // The token works: the node lands in its pool with its labels, and counts one use.
    const joined = await join(h, { token: secret!, hostname: 'laptop-tok-1' });
    expect(joined.status).toBe(201);
    const node = await readNode(h, joined.body.nodeId);
    expect(node).toMatchObject({ poolId: 'pool-tok', provisionState: 'adopted' });
    expect(node.labels).toContainEqual({ key: 'team', value: 'data', source: 'operator' });

    const revoked = await drydock(['token', 'revoke', unlimited.id]);
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect(revoked.stdout).toMatch(new RegExp(`^revoked ${unlimited.id} \\(pool pool-tok\\) at \\S+\\n$`));
    expect((await join(h, { token: unlimited.secret })).status).toBe(401);

    const [table, listed, missing] = await Promise.all([
      drydock(['token', 'list']),
      drydock(['token', 'list', '--json']),
      drydock(['token', 'revoke', 'jt_01k5w8v3x9q2m4n6p8r0s2t4v6']),
    ]);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    expect(cells(table.stdout.split('\n')[0]!)).toEqual([
      'ID',
      'POOL',
      'TENANT',
      'USES',
      'EXPIRES',
      'REVOKED',
      'DESCRIPTION',
    ]);
    const byId = new Map(rows(table.stdout).map((line) => [cells(line)[0], cells(line)]));
    expect(byId.get(id)).toEqual([
      id,
      'pool-tok',
      'acme',
      '1/5',
      new Date(expires).toISOString(),
      '-',
      'data team laptops',
    ]);
    expect(byId.get(unlimited.id)).toEqual([
      unlimited.id,
      'pool-tok',
      'acme',
      '0/∞',
      'never',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      '-',
    ]);
    expect(table.stdout).not.toContain(secret);
    expect(table.stdout).not.toContain(unlimited.secret);

    expect(listed.code).toBe(0);
    const items = JSON.parse(listed.stdout).items as Record<string, unknown>[];
    expect(items.map((t) => t.id).sort()).toEqual([id, unlimited.id].sort());
    expect(items.every((t) => !('secret' in t))).toBe(true);
    expect(items.find((t) => t.id === id)).toMatchObject({ uses: 1, usesLeft: 4, labels: { team: 'data' } });

    expect(missing).toMatchObject({ code: 4, stdout: '' });
    expect(missing.stderr).toMatch(/^error: NOT_FOUND: token jt_\S+ not found/);
  });

  it('needs compute:tokens:write to create and revoke: a tenant key without it gets exit 5', async () => {
    await seedPool(h, { id: 'pool-tsec', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-tsec' });
    const reader = await tenantKey(h, 'acme', ['compute:tokens:read']);
    const [create, revoke, list] = await Promise.all([
      drydock(['token', 'create', '--pool', 'pool-tsec', '--ttl', '1h', '--max-uses', '1'], {
        token: reader.secret,
      }),
      drydock(['token', 'revoke', token.id], { token: reader.secret }),
      drydock(['token', 'list', '--json'], { token: reader.secret }),
    ]);
    expect(create).toEqual({
      code: 5,
      stdout: '',
      stderr: 'error: FORBIDDEN: this key lacks compute:tokens:write\n',
    });
    expect(revoke).toMatchObject({ code: 5, stdout: '' });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).items.map((t: { id: string }) => t.id)).toContain(token.id);
    // Still live: the refused revoke changed nothing.
    expect((await join(h, { token: token.secret })).status).toBe(201);
  });
});

describe('drydock usage errors of tokens and node access', () => {
  it('refuses bad lines with exit 2 before sending anything', async () => {
    const create = ['token', 'create', '--pool', 'default'];
    const lines: Refusal[] = [
      [[...create, '--max-uses', '5'], 'missing --ttl DURATION'],
      [
        [...create, '--ttl', 'tomorrow', '--max-uses', '5'],
        "--ttl must be a duration such as 24h, 30m or 0 (never expires); got 'tomorrow'",
      ],
      [[...create, '--ttl', '24h'], 'missing --max-uses N'],
      [
        [...create, '--ttl', '24h', '--max-uses', '-1'],
        "--max-uses must be a whole number 0–1000000; got '-1'",
      ],
      [
        ['token', 'revoke', 'jt_123'],
        "ID must look like jt_ followed by 26 lowercase ULID characters, got 'jt_123'",
      ],
      [['nodes', 'block', NODE], 'missing --reason R'],
      [
        ['nodes', 'reject', 'laptop-1'],
        "NODE must look like node_ followed by 26 lowercase ULID characters, got 'laptop-1'",
      ],
    ];
    await cli.refuses(lines);
  });
});

describe('drydock nodes approve and reject', () => {
  it('lists pending nodes, approves one into a pool (adopted) and rejects another; neither goes twice', async () => {
    await seedPool(h, { id: 'pool-app', tenantId: 'acme' });
    const [a, b] = await Promise.all([
      join(h, { hostname: 'laptop-app-1' }),
      join(h, { hostname: 'laptop-app-2' }),
    ]);
    const [idA, idB] = [a.body.nodeId as string, b.body.nodeId as string];

    const pending = await drydock(['nodes', 'list', '--state', 'pending']);
    expect(pending).toMatchObject({ code: 0, stderr: '' });
    const listed = rows(pending.stdout).map((line) => line.split(/\s+/).slice(0, 4));
    expect(listed).toContainEqual([idA, 'laptop-app-1', '-', 'pending']);
    expect(listed).toContainEqual([idB, 'laptop-app-2', '-', 'pending']);

    const [approved, rejected, stale] = await Promise.all([
      drydock(['nodes', 'approve', idA, '--pool', 'pool-app']),
      drydock(['nodes', 'reject', idB, '--json']),
      drydock(['nodes', 'approve', idB, '--pool', 'pool-app', '--if-version', '9']),
    ]);
    expect(approved).toMatchObject({ code: 0, stderr: '' });
    expect(approved.stdout).toMatch(
      new RegExp(`^laptop-app-1 \\(${idA}\\): approved into pool pool-app, adopted, version \\d+\\n$`),
    );
    expect(await readNode(h, idA)).toMatchObject({
      poolId: 'pool-app',
      tenantId: 'acme',
      provisionState: 'adopted',
    });
    expect((await eventsOf(h, idA)).map((e) => e.type)).toEqual(['node.approved', 'node.adopted']);

    expect(rejected).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(rejected.stdout)).toMatchObject({ id: idB, provisionState: 'rejected', poolId: null });
    expect(stale).toMatchObject({ code: 3, stdout: '' });
    expect(stale.stderr).toMatch(/^error: CONFLICT: /);

    const [again, rejectAdopted, unknown] = await Promise.all([
      drydock(['nodes', 'approve', idB, '--pool', 'pool-app']),
      drydock(['nodes', 'reject', idA]),
      drydock(['nodes', 'reject', NODE]),
    ]);
    expect(again).toEqual({
      code: 3,
      stdout: '',
      stderr: 'error: INVALID_STATE: approve needs a pending node, not rejected\n',
    });
    expect(rejectAdopted).toEqual({
      code: 3,
      stdout: '',
      stderr: 'error: INVALID_STATE: reject needs a pending node, not adopted\n',
    });
    expect(unknown).toMatchObject({ code: 4, stdout: '' });
  });
});

describe('drydock nodes block, unblock and revoke-identity', () => {
  it('blocks a node (its agent is refused) and unblocks it, showing its access', async () => {
    await seedPool(h, { id: 'pool-blk', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-blk');
    const acme = await tenantKey(h, 'acme', ['compute:nodes:read']);
    expect(await heartbeat(credential)).toBe(200);

    const [blocked, forbidden] = await Promise.all([
      drydock(['nodes', 'block', nodeId, '--reason', 'stolen laptop']),
      drydock(['nodes', 'block', nodeId, '--reason', 'x'], { token: acme.secret }),
    ]);
    expect(blocked).toMatchObject({ code: 0, stderr: '' });
    expect(blocked.stdout).toMatch(new RegExp(`^\\S+ \\(${nodeId}\\): access blocked, version \\d+\\n$`));
    expect(forbidden).toEqual({
      code: 5,
      stdout: '',
      stderr: 'error: FORBIDDEN: this key lacks compute:nodes:block\n',
    });
    const shown = await drydock(['nodes', 'show', nodeId]);
    expect(shown.stdout).toMatch(/^Access:\s+blocked$/m);
    expect(await eventsOf(h, nodeId, 'node.blocked')).toMatchObject([
      { type: 'node.blocked', reason: 'stolen laptop' },
    ]);
    expect(await heartbeat(credential)).toBe(403);

    const version = (await readNode(h, nodeId)).version as number;
    const stale = await drydock(['nodes', 'unblock', nodeId, '--if-version', String(version - 1)]);
    expect(stale).toMatchObject({ code: 3, stdout: '' });
    const unblocked = await drydock(['nodes', 'unblock', nodeId, '--if-version', String(version), '--json']);
    expect(unblocked).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(unblocked.stdout)).toMatchObject({
      id: nodeId,
      access: 'allowed',
      version: version + 1,
    });
    expect(await heartbeat(credential)).toBe(200);
  });

  it('revokes an identity: prints how many certificates, and the old credential is refused', async () => {
    await seedPool(h, { id: 'pool-rev', tenantId: 'acme' });
    const [first, second] = await Promise.all([joinedNode(h, 'pool-rev'), joinedNode(h, 'pool-rev')]);

    const [json, human] = await Promise.all([
      drydock(['nodes', 'revoke-identity', first.nodeId, '--reason', 'key leaked', '--json']),
      drydock(['nodes', 'revoke-identity', second.nodeId]),
    ]);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    const result = JSON.parse(json.stdout);
    expect(result.revokedCertificates).toBe(1);
    expect(result.node).toMatchObject({ id: first.nodeId, identityGeneration: 2 });
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toMatch(
      new RegExp(
        `^\\S+ \\(${second.nodeId}\\): identity revoked, 1 certificate revoked, identity generation 2, version \\d+\\n$`,
      ),
    );

    expect(await heartbeat(first.credential)).toBe(401);
    expect(await eventsOf(h, first.nodeId, 'security.')).toMatchObject([
      { type: 'security.node.identity-revoked', reason: 'key leaked' },
    ]);
    expect(await eventsOf(h, second.nodeId, 'security.')).toMatchObject([
      { type: 'security.node.identity-revoked', reason: null },
    ]);

    const again = await drydock(['nodes', 'revoke-identity', first.nodeId]);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    // Nothing live is left: the same generation, and no second event.
    expect(again.stdout).toContain('identity revoked, 0 certificates revoked, identity generation 2');
    expect(await eventsOf(h, first.nodeId, 'security.')).toHaveLength(1);
  });
});

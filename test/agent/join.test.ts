import { createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { joinTokens, nodeCertificates, nodes } from '../../db/schema';
import { createToken } from '../support/agents';
import { call, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { useAgentBench } from './agent-process';

const h = useHarness({ worker: false });
const bench = useAgentBench(h);

const mode = (file: string) => statSync(file).mode & 0o777;
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'));

describe('drydock-agent join', () => {
  it('with a token: writes node.key and identity.json (0600) and the node is adopted with its inventory', async () => {
    await seedPool(h, { id: 'pool-aj', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-aj', labels: { team: 'data' } });
    const dir = bench.dataDir();
    const inventory = join(dirname(dir), 'inventory.json');
    writeFileSync(
      inventory,
      JSON.stringify({
        accelerators: [
          { model: 'H100', serial: 'SN-1' },
          { model: 'H100', serial: 'SN-2' },
        ],
        storageRoots: [{ path: '/var/lib/drydock', bytes: 2_000_000 }],
      }),
    );
    const before = Date.now();
    const run = await bench.agent([
      'join',
      '--api',
      bench.api,
      '--token',
      token.secret,
      '--data-dir',
      dir,
      '--hostname',
      'gpu-aj-01',
      '--display-name',
      'GPU AJ 01',
      '--inventory',
      inventory,
    ]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const nodeId = /^joined as (node_[0-9a-z]{26}) \(adopted\)$/m.exec(run.stdout)?.[1];
    expect(nodeId, run.stdout).toBeDefined();

    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, 'node.key'))).toBe(0o600);
    expect(mode(join(dir, 'identity.json'))).toBe(0o600);
    const identity = readJson(join(dir, 'identity.json'));
    expect(identity).toEqual({
      nodeId,
      credential: expect.stringMatching(/^ddn_/),
      clusterId: h.deps.clusterId,
      caPublicKey: h.ca.publicKeyPem,
      api: bench.api,
      joinedAt: expect.any(String),
    });
    expect(Date.parse(identity.joinedAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(readdirSync(dir).sort()).toEqual(['identity.json', 'node.key']);

    // The private key is an Ed25519 PKCS8 key whose public half is the certified one.
    const key = createPrivateKey(readFileSync(join(dir, 'node.key'), 'utf8'));
    expect(key.asymmetricKeyType).toBe('ed25519');
    const [certificate] = await h.db
      .select()
      .from(nodeCertificates)
      .where(eq(nodeCertificates.nodeId, nodeId!));
    expect(certificate!.publicKey).toBe(
      createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(),
    );

    const node = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    expect(node).toMatchObject({
      hostname: 'gpu-aj-01',
      displayName: 'GPU AJ 01',
      poolId: 'pool-aj',
      provisionState: 'adopted',
    });
    expect(node.labels).toEqual([
      { key: 'gpu.count', value: '2', source: 'inventory' },
      { key: 'gpu.model', value: 'H100', source: 'inventory' },
      { key: 'team', value: 'data', source: 'operator' },
    ]);
    // The credential it stored works on agent routes.
    const beat = await call(h, 'POST', '/v1/agent/heartbeat', { token: identity.credential, body: {} });
    expect(beat.status).toBe(200);

    // A second join: the identity loads, so nothing is sent and nothing changes.
    const again = await bench.agent(['join', '--api', bench.api, '--token', token.secret, '--data-dir', dir]);
    expect(again).toMatchObject({ code: 0, stdout: `already joined as ${nodeId}\n`, stderr: '' });
    const asJson = await bench.agent(['--json', 'join', '--api', bench.api, '--data-dir', dir]);
    expect(JSON.parse(asJson.stdout)).toEqual({ nodeId, alreadyJoined: true });
    const [stored] = await h.db.select().from(joinTokens).where(eq(joinTokens.id, token.id));
    expect(stored!.uses).toBe(1);
    expect(readJson(join(dir, 'identity.json'))).toEqual(identity);
  });

  it('--reset needs --yes (exit 2, nothing moved); --reset --yes moves the old files aside and joins anew', async () => {
    await seedPool(h, { id: 'pool-ar', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-ar' });
    const dir = bench.dataDir();
    const first = await bench.agent([
      'join',
      '--api',
      bench.api,
      '--token',
      token.secret,
      '--data-dir',
      dir,
      '--json',
    ]);
    expect(first.code).toBe(0);
    const firstId = JSON.parse(first.stdout).nodeId as string;
    writeFileSync(
      join(dir, 'journal.jsonl'),
      '{"id":"cmd_x","kind":"remediate","outcome":"refused","at":"x"}\n',
    );
    const identityBefore = readFileSync(join(dir, 'identity.json'), 'utf8');

    const refused = await bench.agent([
      'join',
      '--api',
      bench.api,
      '--token',
      token.secret,
      '--data-dir',
      dir,
      '--reset',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error: --reset .*--yes/);
    expect(readdirSync(dir).sort()).toEqual(['identity.json', 'journal.jsonl', 'node.key']);
    expect(readFileSync(join(dir, 'identity.json'), 'utf8')).toBe(identityBefore);

    const reset = await bench.agent([
      'join',
      '--api',
      bench.api,
      '--token',
      token.secret,
      '--data-dir',
      dir,
      '--reset',
      '--yes',
      '--json',
    ]);
    expect(reset.code, reset.stderr).toBe(0);
    const second = JSON.parse(reset.stdout);
    expect(second).toMatchObject({ provisionState: 'adopted', nodeId: expect.stringMatching(/^node_/) });
    expect(second.nodeId).not.toBe(firstId);
    expect(readJson(join(dir, 'identity.json')).nodeId).toBe(second.nodeId);

    const files = readdirSync(dir).sort();
    const aside = (name: string) => files.filter((f) => f.startsWith(`${name}.reset-`));
    expect(aside('identity.json')).toHaveLength(1);
    expect(aside('node.key')).toHaveLength(1);
    expect(aside('journal.jsonl')).toHaveLength(1);
    expect(aside('identity.json')[0]).toMatch(/^identity\.json\.reset-\d{4}-\d\d-\d\dT[\d-]+Z$/);
    expect(readFileSync(join(dir, aside('identity.json')[0]!), 'utf8')).toBe(identityBefore);
    expect(existsSync(join(dir, 'journal.jsonl'))).toBe(false);
    expect(reset.stderr).toContain('moved aside:');
    // The old node is untouched: an operator decides what becomes of it.
    const [old] = await h.db.select().from(nodes).where(eq(nodes.id, firstId));
    expect(old!.provisionState).toBe('adopted');
  });

  it('without a token: pending, and says it waits for an operator', async () => {
    await seedPool(h, { id: 'pool-ap', tenantId: 'acme' });
    const dir = bench.dataDir();
    const run = await bench.agent([
      'join',
      '--api',
      bench.api,
      '--data-dir',
      dir,
      '--hostname',
      'laptop-ap',
      '--pool',
      'pool-ap',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const nodeId = /^joined as (node_[0-9a-z]{26}) \(pending\)$/m.exec(run.stdout)?.[1];
    expect(nodeId, run.stdout).toBeDefined();
    expect(run.stdout).toContain("waiting for an operator's approval");
    const node = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    expect(node).toMatchObject({ provisionState: 'pending', poolId: null, hostname: 'laptop-ap' });
    // The operator approves the pool it asked for.
    const approved = await call(h, 'POST', `/v1/nodes/${nodeId}/approve`, { body: {} });
    expect(approved.body).toMatchObject({ provisionState: 'adopted', poolId: 'pool-ap' });
  });

  it('takes the token from DRYDOCK_JOIN_TOKEN', async () => {
    await seedPool(h, { id: 'pool-ae', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-ae' });
    const run = await bench.agent(['join', '--api', bench.api, '--data-dir', bench.dataDir()], {
      DRYDOCK_JOIN_TOKEN: token.secret,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/\(adopted\)/);
  });

  it('refuses a bad token (exit 1, no identity written) and bad command lines (exit 2, nothing sent)', async () => {
    const dir = bench.dataDir();
    const badToken = await bench.agent([
      'join',
      '--api',
      bench.api,
      '--token',
      'ddj_nope',
      '--data-dir',
      dir,
    ]);
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/^error: the join token is unknown, expired, revoked or used up\n$/);
    expect(existsSync(join(dir, 'identity.json'))).toBe(false);

    const count = async () => (await h.db.select().from(nodes)).length;
    const nodesBefore = await count();
    const lines = [
      [],
      ['frobnicate'],
      ['join', '--data-dir', dir],
      ['join', '--api', bench.api],
      ['join', '--api', 'ftp://x', '--data-dir', dir],
      ['join', '--api', bench.api, '--data-dir', dir, '--pool', 'Not_A_Pool'],
      ['join', '--api', bench.api, '--data-dir', dir, '--wat'],
      ['join', '--api', bench.api, '--data-dir', dir, 'extra'],
      ['join', '--api', bench.api, '--data-dir', dir, '--yes=1'],
      ['run', '--data-dir', dir, '--heartbeat-every', 'soon'],
      ['run'],
      ['stop', '--data-dir'],
    ];
    const runs = await Promise.all(lines.map((args) => bench.agent(args)));
    runs.forEach((run, i) => {
      expect(run.code, lines[i]!.join(' ')).toBe(2);
      expect(run.stderr, lines[i]!.join(' ')).toMatch(/^error: /);
    });
    expect(await count()).toBe(nodesBefore);

    const help = await bench.agent(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/join[\s\S]*run[\s\S]*stop/);
    expect((await bench.agent(['join', '--help'])).stdout).toContain('--reset');

    const noIdentity = await bench.agent(['run', '--data-dir', bench.dataDir()]);
    expect(noIdentity.code).toBe(1);
    expect(noIdentity.stderr).toMatch(/^error: no node identity in .*; run 'drydock-agent join' first\n$/);
  });
});

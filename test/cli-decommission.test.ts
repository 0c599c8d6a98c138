import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { operations } from '../db/schema';
import { joinedNode } from './support/agents';
import { line, readNode, useCli, type LinePart, type Refusal } from './support/cli';
import { allocate, call, eventsOf, seedPool, tenantKey } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness();
const cli = useCli(h);
const { drydock } = cli;

const NODE = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
const OTHER = 'node_01k5w8v3x9q2m4n6p8r0s2t4v7';
const DIGEST = `sha256:${'ab'.repeat(32)}`;

const dir = mkdtempSync(joinPath(tmpdir(), 'drydock-decommission-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes `content` (JSON unless a string) into the test's directory; returns its path. */
function file(name: string, content: unknown): string {
  const path = joinPath(dir, name);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** A node joined through the API, its agent running (liveness alive). */
async function liveNode(pool: string) {
  await seedPool(h, { id: pool, tenantId: 'acme' });
  const joined = await joinedNode(h, pool);
  const node = await readNode(h, joined.nodeId);
  return { ...joined, hostname: node.hostname as string };
}

/** The agent says goodbye: liveness `offline`, as after `drydock-agent` stops. */
async function stopAgent(credential: string) {
  const reply = await call(h, 'POST', '/v1/agent/heartbeat', {
    token: credential,
    body: { state: 'offline' },
  });
  expect(reply.status).toBe(200);
}

const previewOf = async (nodeId: string) =>
  (await call(h, 'POST', `/v1/nodes/${nodeId}/decommission/preview`)).body;

const decommissionOps = (nodeId: string) =>
  h.db
    .select()
    .from(operations)
    .where(and(eq(operations.nodeId, nodeId), eq(operations.kind, 'decommission')));

describe('drydock decommission preview', () => {
  it('exits 3 while blockers remain and 0 once ready, as a table and as the API JSON', async () => {
    const { nodeId, credential, hostname } = await liveNode('pool-dp');
    const alloc = await allocate(h, nodeId, 'acme');

    const [blocked, blockedJson] = await Promise.all([
      drydock(['decommission', 'preview', nodeId]),
      drydock(['decommission', 'preview', nodeId, '--json']),
    ]);
    expect(blocked.code).toBe(3);
    expect(blocked.stdout).toMatch(new RegExp(`^Node:\\s+${hostname} \\(${nodeId}\\)$`, 'm'));
    expect(blocked.stdout).toMatch(new RegExp(`^Confirm as:\\s+${nodeId}, ${hostname}$`, 'm'));
    expect(blocked.stdout).toMatch(/^Generation:\s+\d+$/m);
    expect(blocked.stdout).toMatch(/^Digest:\s+sha256:[0-9a-f]{64}$/m);
    expect(blocked.stdout).toMatch(/^Ready:\s+no: 2 blockers$/m);
    expect(blocked.stdout).toMatch(/^BLOCKER\s+ID\s+MESSAGE$/m);
    expect(blocked.stdout).toMatch(new RegExp(`^allocation\\s+${alloc}\\s+live job with no end$`, 'm'));
    expect(blocked.stdout).toMatch(
      new RegExp(`^liveness\\s+${nodeId}\\s+liveness is alive: stop the agent`, 'm'),
    );
    expect(blocked.stdout).toMatch(/^credentials\s+1$/m);
    expect(blocked.stdout).toMatch(/^RETAINED\s+COUNT$/m);
    expect(blocked.stderr).toBe(
      'error: INVALID_STATE: not ready: 2 blockers remain (liveness, allocation); resolve them, then preview again\n',
    );

    // --json: the API's preview on stdout and nothing else, still exit 3.
    expect(blockedJson.code).toBe(3);
    expect(JSON.parse(blockedJson.stdout)).toEqual(await previewOf(nodeId));
    expect(JSON.parse(blockedJson.stdout)).toMatchObject({
      nodeId,
      hostname,
      ready: false,
      blockers: [
        { kind: 'liveness', id: nodeId },
        { kind: 'allocation', id: alloc },
      ],
    });

    expect((await call(h, 'POST', `/v1/allocations/${alloc}/release`)).status).toBe(200);
    await stopAgent(credential);

    const [ready, readyJson] = await Promise.all([
      drydock(['decommission', 'preview', nodeId]),
      drydock(['decommission', 'preview', nodeId, '--json']),
    ]);
    const saved = await previewOf(nodeId);
    expect(ready.code).toBe(0);
    expect(ready.stdout).toMatch(/^Ready:\s+yes$/m);
    expect(ready.stdout).not.toMatch(/BLOCKER/);
    expect(ready.stderr).toBe(
      `ready: drydock decommission execute ${nodeId} --generation ${saved.nodeGeneration} ` +
        `--digest ${saved.dependencyDigest} --confirm IDENTITY --operator O --reason R\n`,
    );
    expect(readyJson).toMatchObject({ code: 0, stderr: '' });
    const json = JSON.parse(readyJson.stdout);
    expect(json).toEqual(saved);
    expect(Object.keys(json).sort()).toEqual(
      [
        'blockers',
        'cleanup',
        'confirmationIdentities',
        'dependencyDigest',
        'displayName',
        'hostname',
        'nodeGeneration',
        'nodeId',
        'ready',
        'retained',
      ].sort(),
    );
    expect(json).toMatchObject({
      ready: true,
      blockers: [],
      confirmationIdentities: [nodeId, hostname],
      nodeGeneration: expect.any(Number),
      dependencyDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(json.cleanup).toContainEqual({ kind: 'credentials', count: 1 });
    expect(json.retained).toContainEqual({ kind: 'allocations', count: 1 });

    // The preview changed nothing.
    expect(await decommissionOps(nodeId)).toEqual([]);
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted', liveness: 'offline' });
  });

  it('answers 4 for a node that does not exist and 5 for a tenant key', async () => {
    const { nodeId } = await liveNode('pool-dp-keys');
    const acme = await tenantKey(h, 'acme', ['compute:nodes:read']);
    const [missing, tenant, tenantExecute] = await Promise.all([
      drydock(['decommission', 'preview', NODE]),
      drydock(['decommission', 'preview', nodeId], { token: acme.secret }),
      drydock(
        [
          'decommission',
          'execute',
          nodeId,
          '--confirm',
          nodeId,
          '--generation',
          '1',
          '--digest',
          DIGEST,
          '--operator',
          'mallory',
          '--reason',
          'EOL',
        ],
        { token: acme.secret },
      ),
    ]);
    expect(missing).toMatchObject({ code: 4, stdout: '' });
    expect(missing.stderr).toMatch(/^error: NOT_FOUND: /);
    expect(tenant).toMatchObject({ code: 5, stdout: '' });
    expect(tenant.stderr).toMatch(/^error: FORBIDDEN: /);
    expect(tenantExecute).toMatchObject({ code: 5, stdout: '' });
    expect(tenantExecute.stderr).toMatch(/^error: FORBIDDEN: /);
    expect(await decommissionOps(nodeId)).toEqual([]);
  });
});

describe('drydock decommission execute: usage errors', () => {
  it('refuses bad lines with exit 2 before sending anything', async () => {
    const preview = {
      nodeId: NODE,
      hostname: 'gpu-b7-03',
      displayName: 'GPU B7-03',
      confirmationIdentities: [NODE, 'gpu-b7-03', 'GPU B7-03'],
      nodeGeneration: 14,
      dependencyDigest: DIGEST,
      ready: true,
      blockers: [],
      cleanup: [],
      retained: [],
    };
    const good = file('good.json', preview);
    const other = file('other.json', { ...preview, nodeId: OTHER });
    const broken = file('broken.json', '{"nodeId": "node_');
    const notPreview = file('not-preview.json', { nodeId: NODE, nodeGeneration: 'fourteen' });
    const missing = joinPath(dir, 'missing.json');
    const who = { operator: 'alice', reason: 'EOL' };
    const byFlags = { generation: 14, digest: DIGEST };
    const execute = (...rest: LinePart[]) => line('decommission execute', ...rest);
    const confirmed = (...rest: LinePart[]) => execute(NODE, { confirm: 'gpu-b7-03' }, ...rest);

    const lines: Refusal[] = [
      [confirmed(who), "give the preview's --generation G and --digest D, or --from-preview FILE"],
      [
        confirmed({ 'from-preview': good, ...byFlags, ...who }),
        'give --from-preview FILE or --generation G with --digest D, not both',
      ],
      [
        confirmed({ 'from-preview': good, digest: DIGEST, ...who }),
        'give --from-preview FILE or --generation G with --digest D, not both',
      ],
      [confirmed({ generation: 14, ...who }), '--generation needs --digest'],
      [
        confirmed({ generation: 14, digest: 'abc', ...who }),
        "--digest must be the preview's dependencyDigest, sha256: and 64 hex digits; got 'abc'",
      ],
      [
        confirmed({ generation: 0, digest: DIGEST, ...who }),
        "--generation must be a whole number ≥ 1; got '0'",
      ],
      [execute(NODE, byFlags, who), 'missing --confirm IDENTITY'],
      [confirmed(byFlags, { reason: 'EOL' }), 'missing --operator O'],
      [confirmed(byFlags, { operator: 'alice' }), 'missing --reason R'],
      [confirmed(byFlags, who, { timeout: '5m' }), '--timeout needs --wait'],
      [
        execute(NODE, { confirm: 'x' }, byFlags, who, { 'idempotency-key': 'short' }),
        "--idempotency-key must be 8–128 of letters, digits and . _ : -; got 'short'",
      ],
      [
        execute('gpu-b7-03', { confirm: 'gpu-b7-03' }, byFlags, who),
        "NODE must look like node_ followed by 26 lowercase ULID characters, got 'gpu-b7-03'",
      ],
      [
        confirmed({ 'from-preview': other }, who),
        `--from-preview ${other} is the preview of ${OTHER}, not of ${NODE}`,
      ],
      [confirmed({ 'from-preview': missing }, who), `--from-preview ${missing} cannot be read (ENOENT)`],
      [
        confirmed({ 'from-preview': broken }, who),
        `--from-preview ${broken} is not a preview saved by: drydock decommission preview ${NODE} --json`,
      ],
      [
        confirmed({ 'from-preview': notPreview }, who),
        `--from-preview ${notPreview} is not a preview saved by: drydock decommission preview ${NODE} --json`,
      ],
      [
        execute(NODE, { confirm: 'gpu-b7-3', 'from-preview': good }, who),
        `--confirm 'gpu-b7-3' is not one of the identities in ${good}: ${NODE}, gpu-b7-03, GPU B7-03 (type one exactly)`,
      ],
      [line('decommission preview', NODE, { wait: true }), "unknown flag '--wait'"],
    ];
    await cli.refuses(lines, { exact: true });

    // The same well-formed line does send: against the dead API it fails to connect (exit 1).
    const sent = await drydock(confirmed({ 'from-preview': good }, who), { api: cli.deadApi });
    expect(sent.code).toBe(1);
    expect(sent.stderr).toMatch(/^error: UNREACHABLE: /);
  });
});

describe('drydock decommission execute', () => {
  it('refuses a stale generation (exit 3) and remaining blockers (exit 3, listed), changing nothing', async () => {
    const { nodeId, hostname } = await liveNode('pool-dx-stale');
    const p = await previewOf(nodeId);
    const who = { operator: 'alice', reason: 'EOL' };

    const stale = await drydock(
      line('decommission execute', nodeId, {
        confirm: hostname,
        generation: p.nodeGeneration - 1 || p.nodeGeneration + 1,
        digest: p.dependencyDigest,
        ...who,
      }),
    );
    expect(stale).toMatchObject({ code: 3, stdout: '' });
    expect(stale.stderr).toBe(
      `preview again: drydock decommission preview ${nodeId}\n` +
        'error: CONFLICT: the node or its dependencies changed since the preview: preview again\n',
    );

    // The agent still runs: the preview is current, but its blocker refuses the execute.
    const saved = file('blocked.json', p);
    const blocked = await drydock(
      line('decommission execute', nodeId, { 'from-preview': saved, confirm: nodeId, ...who }),
    );
    expect(blocked).toMatchObject({ code: 3, stdout: '' });
    const lines = blocked.stderr.trimEnd().split('\n');
    expect(lines[0]!.split(/\s+/)).toEqual(['BLOCKER', 'ID', 'MESSAGE']);
    expect(lines[1]).toMatch(new RegExp(`^liveness\\s+${nodeId}\\s+liveness is alive`));
    expect(lines.slice(2)).toEqual([
      `preview again: drydock decommission preview ${nodeId}`,
      'error: INVALID_STATE: 1 blocker(s) remain',
    ]);

    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted', version: p.nodeGeneration });
    expect(await decommissionOps(nodeId)).toEqual([]);
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toEqual([]);
  });

  it('--from-preview --wait decommissions; the same command again answers the same operation', async () => {
    const { nodeId, credential, hostname } = await liveNode('pool-dx-file');
    await stopAgent(credential);
    const saved = joinPath(dir, `${nodeId}.json`);
    const previewed = await drydock(['decommission', 'preview', nodeId, '--json']);
    expect(previewed.code).toBe(0);
    writeFileSync(saved, previewed.stdout);

    const line = [
      'decommission',
      'execute',
      nodeId,
      '--from-preview',
      saved,
      '--confirm',
      hostname,
      '--operator',
      'alice',
      '--reason',
      'EOL: hardware leaving the fleet',
    ];
    const done = await drydock([...line, '--wait', '--timeout', '1m']);
    expect(done.code).toBe(0);
    const opId = /^decommission (op_[0-9a-z]{26}) succeeded at \S+\n$/.exec(done.stdout)?.[1];
    expect(opId, done.stdout).toBeDefined();
    // The 202's operation: recorded, not yet begun by a worker; no progress lines (no terminal).
    expect(done.stderr).toBe(`${nodeId}: decommission ${opId} pending; waiting\n`);

    // The operator runs the very same line again: same derived key, same operation.
    const [again, againJson, againWait] = await Promise.all([
      drydock(line),
      drydock([...line, '--json']),
      drydock([...line, '--wait', '--timeout', '1m']),
    ]);
    const op = JSON.parse(againJson.stdout);
    expect(op).toMatchObject({ id: opId, kind: 'decommission', nodeId, status: 'succeeded' });
    expect(op.idempotencyKey).toMatch(/^dd-[0-9a-f]{32}$/);
    expect(again).toEqual({
      code: 0,
      stdout: `${nodeId}: decommission ${opId} succeeded (key ${op.idempotencyKey})\n`,
      stderr: '',
    });
    expect(againWait).toMatchObject({ code: 0, stderr: '' });
    expect(againWait.stdout).toMatch(new RegExp(`^decommission ${opId} succeeded at `));

    // Another reason is another request: a key of its own, refused by the decommissioned node.
    const otherReason = await drydock([...line.slice(0, -1), 'another reason']);
    expect(otherReason).toMatchObject({ code: 3, stdout: '' });
    expect(otherReason.stderr).toMatch(/^error: CONFLICT: /m);

    expect(await readNode(h, nodeId)).toMatchObject({
      provisionState: 'decommissioned',
      liveness: 'decommissioned',
    });
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toMatchObject([{ operationId: opId }]);
    expect(await decommissionOps(nodeId)).toHaveLength(1);
  });

  it('an answer lost on the way: the same command again answers the operation the first one started', async () => {
    const { nodeId, credential, hostname } = await liveNode('pool-dx-lost');
    await stopAgent(credential);
    const saved = file(`${nodeId}.json`, await previewOf(nodeId));
    const line = [
      'decommission',
      'execute',
      nodeId,
      '--from-preview',
      saved,
      '--confirm',
      hostname,
      '--operator',
      'alice',
      '--reason',
      'EOL',
      '--wait',
    ];

    // A proxy that delivers the request and drops the connection instead of the answer.
    const lossy = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        void fetch(cli.api + req.url, {
          method: req.method,
          headers: req.headers as Record<string, string>,
          body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
        }).then(() => res.socket?.destroy());
      });
    });
    await new Promise<void>((resolve) => lossy.listen(0, '127.0.0.1', resolve));
    const { port } = lossy.address() as AddressInfo;
    try {
      const lost = await drydock(line, { api: `http://127.0.0.1:${port}` });
      expect(lost).toMatchObject({ code: 1, stdout: '' });
      expect(lost.stderr).toMatch(/^error: UNREACHABLE: cannot reach the Drydock API/);
    } finally {
      await new Promise((resolve) => lossy.close(resolve));
    }
    const [admitted] = await decommissionOps(nodeId);
    expect(admitted).toMatchObject({ kind: 'decommission', idempotencyKey: expect.stringMatching(/^dd-/) });

    const retried = await drydock(line);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(new RegExp(`^decommission ${admitted!.id} succeeded at `));
    expect(await decommissionOps(nodeId)).toHaveLength(1);
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toMatchObject([{ operationId: admitted!.id }]);
  });

  it('--generation --digest with a key of its own; the key with another body is refused', async () => {
    const { nodeId, credential } = await liveNode('pool-dx-flags');
    await stopAgent(credential);
    const p = await previewOf(nodeId);
    const line = [
      'decommission',
      'execute',
      nodeId,
      '--confirm',
      nodeId,
      '--generation',
      String(p.nodeGeneration),
      '--digest',
      p.dependencyDigest,
      '--operator',
      'bob',
      '--reason',
      'EOL',
      '--idempotency-key',
      'change-4711-decom',
    ];
    const started = await drydock([...line, '--json']);
    expect(started).toMatchObject({ code: 0, stderr: '' });
    const op = JSON.parse(started.stdout);
    expect(op).toMatchObject({ kind: 'decommission', nodeId, idempotencyKey: 'change-4711-decom' });

    const followed = await drydock(['operations', 'show', op.id, '--wait', '--timeout', '1m']);
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(new RegExp(`^decommission ${op.id} succeeded at `));

    const reused = await drydock([...line.slice(0, 12), 'another reason', ...line.slice(13)]);
    expect(reused).toMatchObject({ code: 1, stdout: '' });
    expect(reused.stderr).toBe(
      'error: IDEMPOTENCY_KEY_REUSED: this Idempotency-Key was used for another request\n',
    );
    expect(await decommissionOps(nodeId)).toHaveLength(1);
  });
});

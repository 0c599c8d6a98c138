import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { operations } from '../db/schema';
import { readNode, useCli } from './support/cli';
import { retiredNode } from './support/decommission';
import { allocate, call, eventsOf, seedPool } from './support/fixtures';
import { useHarness } from './support/harness';
import { runNode, type Exit } from './support/run-process';

/**
 * packages/client/examples/decommission.ts run as its README says (`npx tsx …`): a child process on
 * the workspace's tsx and Node 24, against a real API and worker, through an HTTP hop that lets a
 * test act on the execute the script sends (change the node first, or lose the answer).
 */

const EXAMPLE = fileURLToPath(new URL('../packages/client/examples/decommission.ts', import.meta.url));
const TSX = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));
const POOL = 'pool-runbook-script';
const REASON = 'EOL: leaving the fleet';

const h = useHarness();
const cli = useCli(h);

interface Execute {
  key: string | undefined;
  body: string;
  status: number;
  answer: string;
}

/** What the hop does to the next executes; reset before each test. */
const hop = {
  url: '',
  executes: [] as Execute[],
  beforeExecute: async () => {},
  /** How many execute answers to lose: the request reaches the API, its answer never comes back. */
  answersToLose: 0,
};

const HOP_BY_HOP = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
const forwarded = (headers: IncomingHttpHeaders) =>
  Object.entries(headers).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string' && !HOP_BY_HOP.has(entry[0]),
  );

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    void (async () => {
      const execute = req.method === 'POST' && /^\/v1\/nodes\/[^/]+\/decommission$/.test(req.url ?? '');
      if (execute) await hop.beforeExecute();
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(cli.api + req.url, {
        method: req.method,
        headers: forwarded(req.headers),
        body,
      });
      const text = await answer.text();
      if (execute) {
        const key = req.headers['idempotency-key'] as string | undefined;
        hop.executes.push({ key, body: body?.toString() ?? '', status: answer.status, answer: text });
        if (hop.answersToLose > 0) {
          hop.answersToLose--;
          req.socket.destroy();
          return;
        }
      }
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
      res.end(text);
    })();
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hop.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await seedPool(h, { id: POOL, tenantId: 'acme' });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  hop.executes = [];
  hop.beforeExecute = async () => {};
  hop.answersToLose = 0;
});

/** `npx tsx decommission.ts ARGS` with the API and operator key in the environment, stdin not a terminal. */
function script(args: string[], api = hop.url) {
  return runNode([TSX, EXAMPLE, ...args], { DRYDOCK_API: api, DRYDOCK_TOKEN: h.operatorKey }, 90_000);
}

/**
 * The script on a terminal of its own (util-linux `script` gives it one), the operator typing
 * `typed`. The terminal carries stdout and stderr both, and echoes what was typed.
 */
function onTerminal(args: string[], typed: string): Promise<Exit> {
  const command = [process.execPath, TSX, EXAMPLE, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`);
  const env = { PATH: process.env.PATH, DRYDOCK_API: hop.url, DRYDOCK_TOKEN: h.operatorKey };
  return new Promise((resolve) => {
    const child = execFile(
      'script',
      ['--quiet', '--return', '--command', command.join(' '), '/dev/null'],
      { env, timeout: 90_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
    child.stdin!.end(`${typed}\n`);
  });
}

/** Everything a decommission could move: the node, its operations, its events. */
async function stateOf(nodeId: string) {
  const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
  return { node: await readNode(h, nodeId), operations: ops, events: await eventsOf(h, nodeId) };
}

async function decommissions(nodeId: string) {
  return h.db
    .select()
    .from(operations)
    .where(and(eq(operations.nodeId, nodeId), eq(operations.kind, 'decommission')));
}

describe('packages/client/examples/decommission.ts', () => {
  it('previews, executes with --yes and follows the operation; a lost answer is resent with the same key, once', async () => {
    const { nodeId, hostname } = await retiredNode(h, POOL);
    const eventsBefore = await eventsOf(h, nodeId);
    hop.answersToLose = 1;

    const run = await script([nodeId, '--yes', '--reason', REASON, '--operator', 'alice']);

    expect(run.code, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`Node        ${nodeId} ${hostname}\n`);
    expect(run.stdout).toContain(`Confirm as  ${nodeId}, ${hostname}\n`);
    expect(run.stdout).toMatch(/^Ready {7}yes$/m);
    expect(run.stdout).toMatch(/^Cleans up {3}credentials 1, .*accelerators 2/m);
    const opId = /^decommission (op_[0-9a-z]{26}) succeeded at \S+$/m.exec(run.stdout)?.[1];
    expect(opId, run.stdout).toBeDefined();
    expect(run.stderr).toMatch(/^cannot reach .*; sending the same request again$/m);

    // Both sends carried one key; the second was answered with the operation the first started.
    expect(hop.executes).toHaveLength(2);
    const [first, second] = hop.executes as [Execute, Execute];
    expect(first.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.key).toBe(first.key);
    expect([first.status, second.status]).toEqual([202, 200]);
    expect(JSON.parse(second.answer)).toMatchObject({ id: opId });

    expect(await readNode(h, nodeId)).toMatchObject({
      provisionState: 'decommissioned',
      liveness: 'decommissioned',
    });
    expect(await decommissions(nodeId)).toMatchObject([
      { id: opId, status: 'succeeded', idempotencyKey: first.key },
    ]);
    // The history before stays as it was; the one event added is the audit record.
    const events = await eventsOf(h, nodeId);
    expect(events.slice(0, eventsBefore.length)).toEqual(eventsBefore);
    expect(events.slice(eventsBefore.length)).toMatchObject([
      { type: 'node.decommissioned', operationId: opId, reason: REASON, data: { operator: 'alice' } },
    ]);
  });

  it('prints JSON lines with --json: the preview, then the finished operation', async () => {
    const { nodeId } = await retiredNode(h, POOL);

    const run = await script([nodeId, '--yes', '--json', '--reason', REASON], cli.api);

    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    const [preview, operation] = lines.map((l) => JSON.parse(l));
    expect(preview).toMatchObject({ nodeId, ready: true, blockers: [] });
    expect(operation).toMatchObject({ kind: 'decommission', nodeId, status: 'succeeded' });
    // Admitted, the operation waits for a worker, then runs: the wait says so on stderr, stdout
    // stays JSON.
    expect(run.stderr).toMatch(new RegExp(`^decommission ${operation.id} (pending|running): \\S`, 'm'));
    expect(await decommissions(nodeId)).toMatchObject([{ id: operation.id, status: 'succeeded' }]);
  });

  it('refuses without --yes where there is no terminal to ask on; nothing changes', async () => {
    const { nodeId } = await retiredNode(h, POOL);
    const before = await stateOf(nodeId);

    const run = await script([nodeId, '--reason', REASON]);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^Ready {7}yes$/m);
    expect(run.stderr).toBe('error: not confirmed: pass --yes (there is no terminal to ask on)\n');
    expect(hop.executes).toEqual([]);
    expect(await stateOf(nodeId)).toEqual(before);
  });

  it("asks on a terminal for the node's hostname and presents what was typed", async () => {
    const { nodeId, hostname } = await retiredNode(h, POOL);

    const run = await onTerminal([nodeId, '--reason', REASON], hostname);

    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain(`Type ${hostname} to decommission it for good (there is no undo): `);
    expect(run.stdout).toMatch(/^decommission op_[0-9a-z]{26} succeeded at /m);
    expect(hop.executes.map((e) => JSON.parse(e.body).confirm)).toEqual([hostname]);
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'decommissioned' });
  });

  it('refuses on a terminal when what was typed is none of the identities; nothing changes', async () => {
    const { nodeId, hostname } = await retiredNode(h, POOL);
    const before = await stateOf(nodeId);

    const run = await onTerminal([nodeId, '--reason', REASON], `${hostname}-typo`);

    expect(run.code, run.stdout).toBe(1);
    expect(run.stdout).toContain(`error: not confirmed: '${hostname}-typo' is not ${nodeId}, ${hostname}`);
    expect(hop.executes).toEqual([]);
    expect(await stateOf(nodeId)).toEqual(before);
  });

  it('refuses a node that is not ready, listing its blockers; nothing is sent or changed', async () => {
    const { nodeId } = await retiredNode(h, POOL);
    const alloc = await allocate(h, nodeId, 'acme');
    const before = await stateOf(nodeId);

    const run = await script([nodeId, '--yes', '--reason', REASON]);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^Ready {7}no: 1 blocker\(s\)$/m);
    expect(run.stdout).toContain(`  blocker   allocation ${alloc}: `);
    expect(run.stderr).toBe('error: not ready: resolve the blockers above, then run this again\n');
    expect(hop.executes).toEqual([]);
    expect(await stateOf(nodeId)).toEqual(before);
  });

  it("exits 1 with the API's message when the node changed after the preview; nothing moves", async () => {
    const { nodeId } = await retiredNode(h, POOL);
    let changed: Awaited<ReturnType<typeof stateOf>> | undefined;
    hop.beforeExecute = async () => {
      expect((await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: {} })).status).toBe(200);
      changed = await stateOf(nodeId);
    };

    const run = await script([nodeId, '--yes', '--reason', REASON]);

    expect(run.code).toBe(1);
    expect(hop.executes).toHaveLength(1);
    const refusal = JSON.parse(hop.executes[0]!.answer) as {
      error: { code: string; message: string; requestId: string };
    };
    expect(hop.executes[0]!.status).toBe(409);
    expect(refusal.error.code).toBe('CONFLICT');
    expect(run.stderr).toBe(
      `error: CONFLICT: ${refusal.error.message} (request ${refusal.error.requestId})\n` +
        'preview again: run this again\n',
    );
    expect(changed!.node).toMatchObject({ provisionState: 'adopted', cordoned: true });
    expect(await stateOf(nodeId)).toEqual(changed);
    expect(await decommissions(nodeId)).toEqual([]);
  });
});

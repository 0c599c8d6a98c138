import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createSimulator } from '../../agent/simulator';
import { generateCa, type ClusterCa } from '../../ca';
import { newId } from '../../domain/ids';
import { encodePurgePayload, signPayload } from '../../domain/signing';
import { nodeCommands } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import { purgeWorkflowId, wakeSignal } from '../../workflows/definitions';
import { createToken, joinedNode } from '../support/agents';
import { workflowResult } from '../support/builders';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { signalAndAwaitStep } from '../support/witnesses';
import { AGENT_BIN, joinedMachine, runMachine, useAgentBench, type Machine } from './agent-process';

const h = useHarness();
const bench = useAgentBench(h);

const node = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;
const operation = async (id: string) => (await call(h, 'GET', `/v1/operations/${id}`)).body;
const commandRow = async (id: string) =>
  (await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id)))[0]!;
/** The purge workflow's result, once the dispatcher has started it. */
const purgeResult = (nodeId: string, operationId: string) =>
  workflowResult(h, purgeWorkflowId(nodeId), operationId);

const machine = (poolId: string) => joinedMachine(h, bench, poolId);
const running = (m: Machine, dataDir?: string) => runMachine(bench, m, dataDir);

async function purge(nodeId: string, reason?: string) {
  const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/purge`, { body: { confirm: true, reason } });
  if (reply.status !== 202) throw new Error(`purge failed: ${JSON.stringify(reply.body)}`);
  return reply.body.operation.id as string;
}

/**
 * Every file and directory under `dir`, relative, sorted — but the pid file and the journal, which
 * running and refusing write.
 */
const kept = (dir: string) => listing(dir).filter((f) => f !== 'agent.pid' && f !== 'journal.jsonl');

/** Every file and directory under `dir`, relative, sorted. */
function listing(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? [`${prefix}${e.name}/`, ...listing(join(dir, e.name), `${prefix}${e.name}/`)]
        : [`${prefix}${e.name}`],
    )
    .sort();
}

/** A purge command for `nodeId`, signed with `key`, queued straight into its command stream. */
async function queueSigned(
  nodeId: string,
  claims: { clusterId?: string; nodeId?: string; commandId?: string },
  key: ClusterCa = h.ca,
) {
  const id = newId('cmd');
  const payload = encodePurgePayload({
    clusterId: claims.clusterId ?? h.clusterId,
    nodeId: claims.nodeId ?? nodeId,
    commandId: claims.commandId ?? id,
    kind: 'purge',
    issuedAt: new Date().toISOString(),
  });
  await h.db
    .insert(nodeCommands)
    .values({ id, nodeId, kind: 'purge', payload, signature: signPayload(key.privateKey, payload) });
  return id;
}

describe('drydock-agent purge', () => {
  it('a verified purge: acked, node forgotten (node.purged once, operation succeeded), data directory and binary deleted, agent exits 0', async () => {
    const m = await machine('pool-purge');
    // What a working node accumulates: runtimes and tools, beside the identity and the journal.
    mkdirSync(join(m.dir, 'runtimes', 'py311', 'bin'), { recursive: true });
    writeFileSync(join(m.dir, 'runtimes', 'py311', 'bin', 'python'), '#!/bin/sh\n');
    mkdirSync(join(m.dir, 'plugins'));
    writeFileSync(join(m.dir, 'plugins', 'nvidia.json'), '{}');
    const agent = await running(m);
    const mark = agent.stderr().length;

    const operationId = await purge(m.nodeId, 'machine returned to the vendor');
    expect(await agent.exited).toBe(0);
    const log = agent.stderr().slice(mark);
    expect(log).toMatch(/command cmd_\w+ \(purge\) acked/);
    expect(log).toMatch(/purged: data directory and binary removed\n$/);
    // Stopped before it deleted: no heartbeat was refused, nothing failed.
    expect(log).not.toMatch(/error|warn|no longer valid/);
    expect(existsSync(m.dir)).toBe(false);
    expect(existsSync(m.binary)).toBe(false);
    expect(existsSync(dirname(m.dir))).toBe(true);

    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
    expect(await node(m.nodeId)).toMatchObject({ deletedAt: expect.any(String), provisionState: 'purging' });
    expect(await eventsOf(h, m.nodeId, 'node.purged')).toHaveLength(1);
    expect(await eventsOf(h, m.nodeId, 'node.purge.refused')).toEqual([]);
    expect(await operation(operationId)).toMatchObject({ status: 'succeeded', result: { purged: true } });
    const heartbeat = await call(h, 'POST', '/v1/agent/heartbeat', { token: m.credential, body: {} });
    expect(heartbeat.status).toBe(401);
  });

  it('without --binary a purge deletes the data directory only: no binary, not even the launcher it runs from', async () => {
    const m = await machine('pool-purge-no-binary');
    const agent = bench.spawnAgent(['run', '--data-dir', m.dir, '--heartbeat-every', '300ms']);
    await agent.waitForLog(/connected to .* as node_/, 15_000);

    const operationId = await purge(m.nodeId);
    expect(await agent.exited).toBe(0);
    expect(agent.stderr()).toMatch(/purged: data directory removed \(no binary to remove\)\n$/);
    expect(existsSync(m.dir)).toBe(false);
    expect(existsSync(m.binary)).toBe(true);
    expect(existsSync(AGENT_BIN)).toBe(true);
    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
  });

  it('refuses a forged signature, another cluster, another node, a replayed command: each audited with its reason, nothing deleted', async () => {
    const m = await machine('pool-forged');
    await seedPool(h, { id: 'pool-forged-b', tenantId: 'acme' });
    const other = await joinedNode(h, 'pool-forged-b');
    const agent = await running(m);
    const before = kept(m.dir);

    // A genuine command of node B, signed by the cluster CA, shows up in A's stream.
    const otherPurge = await purge(other.nodeId);
    const [genuine] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, other.nodeId));
    const replayed = newId('cmd');
    await h.db.insert(nodeCommands).values({
      id: replayed,
      nodeId: m.nodeId,
      kind: 'purge',
      payload: genuine!.payload,
      signature: genuine!.signature,
    });
    const forged = await queueSigned(m.nodeId, {}, generateCa());
    const cluster = await queueSigned(m.nodeId, { clusterId: 'someone-elses-cluster' });
    const otherNode = await queueSigned(m.nodeId, { nodeId: other.nodeId });
    const moved = await queueSigned(m.nodeId, { commandId: genuine!.id });
    await h.db.transaction((tx) => wakeNode(tx, m.nodeId));

    const expected: Record<string, string> = {
      [forged]: 'bad signature: not signed by this cluster CA',
      [cluster]: `command is for cluster someone-elses-cluster, not ${h.clusterId}`,
      [otherNode]: `command is for node ${other.nodeId}, not ${m.nodeId}`,
      [replayed]: `command is for node ${other.nodeId}, not ${m.nodeId}`,
      [moved]: `payload names command ${genuine!.id}, delivered as ${moved}`,
    };
    for (const [id, reason] of Object.entries(expected)) {
      const row = await eventually(async () => {
        const r = await commandRow(id);
        return r.status === 'pending' ? undefined : r;
      }, 10_000);
      expect(row, id).toMatchObject({ status: 'refused', refuseReason: reason });
      await agent.waitForLog(new RegExp(`command ${id} \\(purge\\) refused: `));
    }
    const refusals = await eventsOf(h, m.nodeId, 'node.purge.refused');
    expect(refusals.map((e) => [e.data.commandId, e.reason, e.actor]).sort()).toEqual(
      Object.entries(expected)
        .map(([id, reason]) => [id, reason, `node:${m.nodeId}`])
        .sort(),
    );

    // Nothing deleted, nothing stopped: the node carries on as before.
    expect(agent.child.exitCode).toBeNull();
    expect(kept(m.dir)).toEqual(before);
    expect(existsSync(m.binary)).toBe(true);
    expect(await node(m.nodeId)).toMatchObject({ deletedAt: null, provisionState: 'adopted' });
    expect((await call(h, 'POST', '/v1/agent/heartbeat', { token: m.credential, body: {} })).status).toBe(
      200,
    );
    expect(await eventsOf(h, m.nodeId, 'node.purged')).toEqual([]);
    // Node B's purge is untouched by the replay, and ends when B is deleted.
    expect(await commandRow(genuine!.id)).toMatchObject({ status: 'pending' });
    await call(h, 'DELETE', `/v1/nodes/${other.nodeId}`);
    expect(await purgeResult(other.nodeId, otherPurge)).toBe('cancelled');
  });

  it('follows no link out of the data directory: links inside are removed as links, their targets stay', async () => {
    const m = await machine('pool-links');
    const outside = join(dirname(m.dir), 'outside');
    mkdirSync(join(outside, 'models'), { recursive: true });
    writeFileSync(join(outside, 'precious.txt'), 'not the agent’s');
    writeFileSync(join(outside, 'models', 'weights.bin'), 'weights');
    symlinkSync(join(outside, 'precious.txt'), join(m.dir, 'file-link'));
    symlinkSync(outside, join(m.dir, 'dir-link'));
    mkdirSync(join(m.dir, 'tools', 'cache'), { recursive: true });
    symlinkSync(join(outside, 'models'), join(m.dir, 'tools', 'cache', 'models'));
    const agent = await running(m);

    const operationId = await purge(m.nodeId);
    expect(await agent.exited).toBe(0);
    expect(existsSync(m.dir)).toBe(false);
    expect(readFileSync(join(outside, 'precious.txt'), 'utf8')).toBe('not the agent’s');
    expect(readFileSync(join(outside, 'models', 'weights.bin'), 'utf8')).toBe('weights');
    expect(listing(outside)).toEqual(['models/', 'models/weights.bin', 'precious.txt']);
    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
  });

  it('refuses when the data directory is itself a link: node.purge.refused, the node stays purging, nothing deleted', async () => {
    const m = await machine('pool-linked-dir');
    const link = join(dirname(m.dir), 'data-link');
    symlinkSync(m.dir, link);
    const agent = await running(m, link);
    const before = kept(m.dir);

    const operationId = await purge(m.nodeId);
    const reason = `the data directory ${link} is a symbolic link; nothing deleted`;
    await agent.waitForLog(new RegExp(`\\(purge\\) refused: the data directory .* is a symbolic link`));
    await eventually(async () => (await operation(operationId)).progress?.phase === 'refused');
    expect((await operation(operationId)).progress).toMatchObject({
      phase: 'refused',
      waitingFor: { refusedReason: reason },
    });
    expect(await eventsOf(h, m.nodeId, 'node.purge.refused')).toMatchObject([{ reason, operationId }]);
    expect(await node(m.nodeId)).toMatchObject({ provisionState: 'purging', deletedAt: null });
    expect(agent.child.exitCode).toBeNull();
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(kept(m.dir)).toEqual(before);
    expect(existsSync(m.binary)).toBe(true);

    // A refused purge waits for a DELETE, which ends it cancelled; the agent learns it is forgotten.
    await call(h, 'DELETE', `/v1/nodes/${m.nodeId}`);
    expect(await purgeResult(m.nodeId, operationId)).toBe('cancelled');
    expect(await agent.exited).toBe(3);
    expect(kept(m.dir)).toEqual(before);
  });

  it('an offline node is purged when it comes back', async () => {
    const m = await machine('pool-offline');
    const agent = await running(m);
    expect((await bench.agent(['stop', '--data-dir', m.dir])).code).toBe(0);
    expect(await agent.exited).toBe(0);
    expect((await node(m.nodeId)).liveness).toBe('offline');

    const operationId = await purge(m.nodeId);
    await eventually(async () => (await operation(operationId)).progress?.phase === 'waiting-for-node');
    // Woken, the purge looks at its command again and still waits: nothing answers for the node.
    await signalAndAwaitStep(h.temporal, purgeWorkflowId(m.nodeId), wakeSignal.name);
    expect((await operation(operationId)).progress?.phase).toBe('waiting-for-node');
    expect(existsSync(join(m.dir, 'identity.json'))).toBe(true);
    expect((await operation(operationId)).status).toBe('running');

    const back = bench.spawnAgent(['run', '--data-dir', m.dir, '--binary', m.binary]);
    expect(await back.exited).toBe(0);
    expect(back.stderr()).toMatch(/purged: data directory and binary removed/);
    expect(existsSync(m.dir)).toBe(false);
    expect(existsSync(m.binary)).toBe(false);
    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
    expect(await operation(operationId)).toMatchObject({ status: 'succeeded' });
  });

  it('a blocked node still gets the purge, and carries it out', async () => {
    const m = await machine('pool-blocked');
    const agent = await running(m);
    const mark = agent.stderr().length;
    await call(h, 'POST', `/v1/nodes/${m.nodeId}/block`, { body: { reason: 'stolen' } });
    await agent.waitForLog(/blocked by the control plane; retrying/, 5_000, mark);

    const operationId = await purge(m.nodeId, 'stolen: wipe it');
    expect(await agent.exited).toBe(0);
    expect(existsSync(m.dir)).toBe(false);
    expect(existsSync(m.binary)).toBe(false);
    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
    expect(await eventsOf(h, m.nodeId, 'node.purged')).toHaveLength(1);
  });

  it('deleted while purging, the node never purges: the purge ends cancelled and a returning agent deletes nothing', async () => {
    const m = await machine('pool-never');
    const operationId = await purge(m.nodeId);
    await eventually(async () => (await operation(operationId)).progress?.phase === 'waiting-for-node');
    expect((await call(h, 'DELETE', `/v1/nodes/${m.nodeId}`, { body: { reason: 'gone' } })).body).toEqual({
      nodeId: m.nodeId,
      deleted: true,
    });
    expect(await purgeResult(m.nodeId, operationId)).toBe('cancelled');
    expect(await operation(operationId)).toMatchObject({ status: 'cancelled' });
    expect(await eventsOf(h, m.nodeId, 'node.purged')).toEqual([]);
    const before = kept(m.dir);

    // Its purge command was cancelled with it: the machine, if it comes back, is refused as unknown.
    const back = await bench.agent(['run', '--data-dir', m.dir, '--binary', m.binary]);
    expect(back.code).toBe(3);
    expect(kept(m.dir)).toEqual(before);
    expect(existsSync(m.binary)).toBe(true);
  });

  it('finishes a purge it acknowledged before it was killed: acks again, then deletes', async () => {
    const m = await machine('pool-resume');
    const operationId = await purge(m.nodeId);
    const [command] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, m.nodeId));
    // Journaled as acked, then killed before the ack reached the API (or before the deletion ended).
    const entry = { id: command!.id, kind: 'purge', outcome: 'acked', at: new Date().toISOString() };
    appendFileSync(join(m.dir, 'journal.jsonl'), `${JSON.stringify(entry)}\n`);

    const back = await bench.agent(['run', '--data-dir', m.dir, '--binary', m.binary]);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stderr).toMatch(/finishing purge cmd_\w+, acknowledged before the agent stopped/);
    expect(back.stderr).toMatch(/purged: data directory and binary removed/);
    expect(existsSync(m.dir)).toBe(false);
    expect(existsSync(m.binary)).toBe(false);
    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
    expect(await operation(operationId)).toMatchObject({ status: 'succeeded' });
  });

  it('run --binary must name a file: a missing path or a directory is a usage error (exit 2)', async () => {
    const m = await machine('pool-binary');
    for (const [binary, problem] of [
      [join(dirname(m.dir), 'missing'), 'does not exist'],
      [dirname(m.dir), 'is a directory'],
    ] as const) {
      const run = await bench.agent(['run', '--data-dir', m.dir, '--binary', binary]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`error: --binary must name the agent's binary; ${binary} ${problem}`);
    }
    expect(existsSync(join(m.dir, 'agent.pid'))).toBe(false);
  });

  it('simulated agents ack a genuine purge, delete nothing and end; refuse a forged one', async () => {
    await seedPool(h, { id: 'pool-sim-purge', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-sim-purge' });
    const sim = await createSimulator({
      api: bench.api,
      token: token.secret,
      count: 2,
      hostnamePrefix: 'sim-purge',
      heartbeatEveryMs: 300,
    });
    try {
      const [purged, kept] = sim.agents.map((a) => a.nodeId) as [string, string];
      const forged = await queueSigned(kept, {}, generateCa());
      h.deps.wakeups.wake(kept);
      const operationId = await purge(purged);
      expect(await purgeResult(purged, operationId)).toBe('purged');
      expect(await sim.agent(purged).session.ended).toMatchObject({ reason: 'final', kind: 'purge' });
      await eventually(async () => (await commandRow(forged)).status === 'refused');
      expect(await commandRow(forged)).toMatchObject({
        refuseReason: 'bad signature: not signed by this cluster CA',
      });
      expect(sim.agent(kept).session.state).toBe('running');
    } finally {
      await sim.close();
    }
  });
});

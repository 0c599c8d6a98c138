import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { caOffer, generateCa, type ClusterCa } from '../../ca';
import { newId } from '../../domain/ids';
import { caFingerprint, encodePurgePayload, endorseCaKey, signPayload } from '../../domain/signing';
import { nodeCommands } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import { purgeWorkflowId } from '../../workflows/definitions';
import { workflowResult } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { joinedMachine, runMachine, useAgentBench, type RunningAgent } from './agent-process';

const h = useHarness();
const bench = useAgentBench(h);

/** Every CA key of these tests; `joined` is the one the harness starts with. */
let joined: ClusterCa;
const [second, third, forged] = [generateCa(), generateCa(), generateCa()];

/**
 * The API as it is after a restart with DRYDOCK_CA_KEY_FILE = `current` and
 * DRYDOCK_CA_PREVIOUS_KEY_FILES = `previous` (newest first): the same `caOffer` the server runs,
 * and purge requests signed with `current` (the API signs them; workers hold no CA key).
 */
function configureApi(current: ClusterCa, previous: ClusterCa[]): void {
  const files = previous.map((ca) => {
    const file = join(bench.dataDir(), '..', `ca-${caFingerprint(ca.publicKeyPem).slice(7, 19)}.pem`);
    writeFileSync(file, ca.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), { mode: 0o600 });
    return file;
  });
  const offer = caOffer(current, files, h.clusterId);
  h.deps.caPublicKeyPem = offer.publicKey;
  h.deps.caEndorsements = offer.endorsements;
  h.deps.purgeSigner = { clusterId: h.clusterId, privateKey: current.privateKey };
}

const identityOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'identity.json'), 'utf8'));
const commandRow = async (id: string) =>
  (await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id)))[0]!;
/** The purge workflow's result, once the dispatcher has started it. */
const purgeResult = (nodeId: string, operationId: string) =>
  workflowResult(h, purgeWorkflowId(nodeId), operationId);

async function purge(nodeId: string) {
  const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/purge`, { body: { confirm: true } });
  if (reply.status !== 202) throw new Error(`purge failed: ${JSON.stringify(reply.body)}`);
  return reply.body.operation.id as string;
}

/** A purge of a running agent, the agent frozen until the API answered (see test/agent/purge.test.ts). */
async function purgeLive(agent: RunningAgent, nodeId: string) {
  agent.child.kill('SIGSTOP');
  try {
    return await purge(nodeId);
  } finally {
    agent.child.kill('SIGCONT');
  }
}

/** A purge command for `nodeId` signed with `key`, queued straight into its command stream. */
async function queueSigned(nodeId: string, key: ClusterCa) {
  const id = newId('cmd');
  const payload = encodePurgePayload({
    clusterId: h.clusterId,
    nodeId,
    commandId: id,
    kind: 'purge',
    issuedAt: new Date().toISOString(),
  });
  await h.db
    .insert(nodeCommands)
    .values({ id, nodeId, kind: 'purge', payload, signature: signPayload(key.privateKey, payload) });
  await h.db.transaction((tx) => wakeNode(tx, nodeId));
  return id;
}

const settled = (id: string) =>
  eventually(async () => {
    const row = await commandRow(id);
    return row.status === 'pending' ? undefined : row;
  });

describe('CA key rotation with real agents', () => {
  it('a running agent follows the endorsed key, stores it, refuses the old key from then on and obeys a purge signed by the new one', async () => {
    joined = h.ca;
    configureApi(joined, []);
    const m = await joinedMachine(h, bench, 'pool-rotate');
    const before = identityOf(m.dir);
    expect(before.caPublicKey).toBe(joined.publicKeyPem);
    const agent = await runMachine(bench, m);
    const mark = agent.stderr().length;

    configureApi(second, [joined]);
    await agent.waitForLog(
      new RegExp(`the cluster CA key rotated: trusting ${caFingerprint(second.publicKeyPem)} from now on`),
      10_000,
      mark,
    );
    // Stored atomically, owner-only, everything else as it was.
    expect(identityOf(m.dir)).toEqual({ ...before, caPublicKey: second.publicKeyPem });
    expect(statSync(join(m.dir, 'identity.json')).mode & 0o777).toBe(0o600);
    expect(agent.stderr().slice(mark)).not.toMatch(/warn|error/);

    // The key it replaced is trusted no more: a purge signed with it is refused, nothing deleted.
    const old = await queueSigned(m.nodeId, joined);
    expect(await settled(old)).toMatchObject({
      status: 'refused',
      refuseReason: 'bad signature: not signed by this cluster CA',
    });
    expect(existsSync(join(m.dir, 'node.key'))).toBe(true);

    const operationId = await purgeLive(agent, m.nodeId);
    expect(await agent.exited).toBe(0);
    expect(existsSync(m.dir)).toBe(false);
    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
    expect((await call(h, 'GET', `/v1/operations/${operationId}`)).body.status).toBe('succeeded');
    expect(await eventsOf(h, m.nodeId, 'node.purged')).toHaveLength(1);
  });

  it('a key without a valid endorsement is not followed: identity.json unchanged, its purge refused', async () => {
    configureApi(second, [joined]);
    const m = await joinedMachine(h, bench, 'pool-forged-ca');
    const before = identityOf(m.dir);
    expect(before.caPublicKey).toBe(second.publicKeyPem);
    const agent = await runMachine(bench, m);
    const mark = agent.stderr().length;

    // What a node credential or a position in front of the API can offer: a key it made, vouched
    // for by itself, beside the genuine chain.
    h.deps.caPublicKeyPem = forged.publicKeyPem;
    h.deps.caEndorsements = [
      endorseCaKey(forged.privateKey, { clusterId: h.clusterId, publicKey: forged.publicKeyPem }),
      endorseCaKey(joined.privateKey, { clusterId: h.clusterId, publicKey: second.publicKeyPem }),
    ];
    await agent.waitForLog(
      new RegExp(
        `CA key not followed: the offered CA key is not endorsed by the key this node trusts; still trusting ${caFingerprint(second.publicKeyPem)}`,
      ),
      10_000,
      mark,
    );
    const forgedPurge = await queueSigned(m.nodeId, forged);
    expect(await settled(forgedPurge)).toMatchObject({
      status: 'refused',
      refuseReason: 'bad signature: not signed by this cluster CA',
    });
    expect(identityOf(m.dir)).toEqual(before);
    expect(agent.child.exitCode).toBeNull();
    // Said once, though the poll that brought the purge offered the forged key again.
    expect(
      agent
        .stderr()
        .slice(mark)
        .match(/CA key not followed/g),
    ).toHaveLength(1);
    configureApi(second, [joined]);
  });

  it('an agent that missed two rotations, blocked meanwhile, follows the chain from its command poll and obeys the purge', async () => {
    configureApi(joined, []);
    const m = await joinedMachine(h, bench, 'pool-missed');
    expect(identityOf(m.dir).caPublicKey).toBe(joined.publicKeyPem);

    // While the machine is off: two rotations, a block (no heartbeat is accepted), a purge.
    configureApi(third, [second, joined]);
    expect(
      (await call(h, 'POST', `/v1/nodes/${m.nodeId}/block`, { body: { reason: 'stolen' } })).status,
    ).toBe(200);
    const operationId = await purge(m.nodeId);

    const agent = bench.spawnAgent([
      'run',
      '--data-dir',
      m.dir,
      '--heartbeat-every',
      '300ms',
      '--binary',
      m.binary,
    ]);
    expect(await agent.exited).toBe(0);
    const log = agent.stderr();
    const rotated = log.indexOf(`trusting ${caFingerprint(third.publicKeyPem)} from now on`);
    expect(rotated).toBeGreaterThan(-1);
    expect(log.indexOf('(purge) acked')).toBeGreaterThan(rotated);
    expect(existsSync(m.dir)).toBe(false);
    expect(await purgeResult(m.nodeId, operationId)).toBe('purged');
  });
});

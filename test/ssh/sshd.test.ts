import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sshFilesIn } from '../../agent/ssh-files';
import { issueSshCertificate } from '../../api/services/ssh-certificates';
import type { Principal } from '../../domain/principal';
import { joinedMachine, useAgentBench } from '../agent/agent-process';
import { createToken, join as joinNode } from '../support/agents';
import { useCli } from '../support/cli';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { ssh, sshOptions, startSshd, userKey, type Sshd } from './sshd';

const execute = promisify(execFile);

/**
 * Break-glass SSH against the real thing: Debian's sshd configured as docs/security.md says, the
 * files written by the real `drydock-agent run --ssh-dir`, logins by the real ssh client.
 */
const h = useHarness({ worker: false });
const bench = useAgentBench(h);
const cli = useCli(h);

let work: string;
let sshDir: string;
let sshd: Sshd;
let nodeId: string;
let key: string;

const OPERATOR: Principal = { kind: 'operator', keyId: 'bootstrap', name: 'bootstrap-operator' };

/** Issues a certificate for `key`'s public half through the API; writes it to `<key>-<serial>-cert.pub`. */
async function issue(node: string, body: Record<string, unknown> = {}) {
  const reply = await call(h, 'POST', `/v1/nodes/${node}/ssh-certificates`, {
    body: { publicKey: readFileSync(`${key}.pub`, 'utf8'), reason: 'disk full, agent down', ...body },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  const file = `${key}-${reply.body.serial}-cert.pub`;
  writeFileSync(file, `${reply.body.certificate}\n`);
  return { serial: reply.body.serial as number, file };
}

/** The revoked serials the node's KRL names, as ssh-keygen reads the file the agent wrote. */
async function krlSerials(): Promise<string> {
  return (await execute('ssh-keygen', ['-Q', '-l', '-f', sshFilesIn(sshDir).krl])).stdout;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'drydock-ssh-test-'));
  sshDir = join(work, 'ssh');
  const machine = await joinedMachine(h, bench, 'pool-ssh');
  nodeId = machine.nodeId;
  const agent = bench.spawnAgent([
    'run',
    '--data-dir',
    machine.dir,
    '--heartbeat-every',
    '500ms',
    '--ssh-dir',
    sshDir,
    '--ssh-refresh',
    '200ms',
  ]);
  await agent.waitForLog(/SSH files written to /, 15_000);
  sshd = await startSshd(sshDir);
  key = await userKey(work, 'alice');
}, 60_000);

afterAll(async () => {
  await sshd?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('break-glass SSH with the real sshd', () => {
  it("the agent writes the SSH CA key, the node's principal for root and a KRL", async () => {
    const files = sshFilesIn(sshDir);
    expect(readFileSync(files.ca, 'utf8')).toBe(`${h.deps.sshCa.publicKey}\n`);
    expect(readFileSync(files.rootPrincipals, 'utf8')).toBe(`drydock-node:${nodeId}\n`);
    expect(existsSync(files.krl)).toBe(true);
    expect(await krlSerials()).not.toMatch(/serial:/);
  });

  it('a certificate issued for the node logs in as root and runs a command; sshd logs who and why', async () => {
    const { serial, file } = await issue(nodeId, { ttl: '10m' });
    const login = await ssh(sshd.port, key, file, 'echo ok; id -un');
    expect(login, login.stderr).toMatchObject({ code: 0, stdout: 'ok\nroot\n' });
    expect(sshd.log()).toContain(
      `ID key:bootstrap-operator for ${nodeId}: disk full, agent down (serial ${serial})`,
    );
    const [event] = await eventsOf(h, nodeId, 'security.node.ssh-certificate-issued');
    expect(event).toMatchObject({
      actor: 'key:bootstrap-operator',
      reason: 'disk full, agent down',
      data: { serial, principal: `drydock-node:${nodeId}` },
    });
  });

  it('drydock nodes ssh issues a certificate for the key and runs ssh with it', async () => {
    const run = await cli.drydock([
      'nodes',
      'ssh',
      nodeId,
      '--key',
      `${key}.pub`,
      '--reason',
      'the CLI logs in',
      '--host',
      '127.0.0.1',
      ...sshOptions(sshd.port).map((option) => `--ssh-arg=${option}`),
      '--run',
      'echo via-cli',
    ]);
    expect(run, run.stderr).toMatchObject({ code: 0, stdout: 'via-cli\n' });
    expect(run.stderr).toMatch(
      /^certificate \d+ for drydock-node:node_\w+, valid until .*; ssh root@127\.0\.0\.1\n/,
    );
    expect(sshd.log()).toContain(`ID key:bootstrap-operator for ${nodeId}: the CLI logs in`);
  });

  it('drydock nodes ssh refuses a bad line before any request', async () => {
    await cli.refuses([
      [['nodes', 'ssh', nodeId], 'missing --reason R'],
      [
        ['nodes', 'ssh', nodeId, '--reason', 'r', '--ttl', 'soon'],
        '--ttl must be a duration such as 15m or 1h',
      ],
      [['nodes', 'ssh', 'web-1', '--reason', 'r'], 'NODE must look like node_'],
    ]);
  });

  it("a certificate for another node is refused: not this node's principal", async () => {
    await seedPool(h, { id: 'pool-ssh-other', tenantId: 'acme' });
    const other = await joinNode(h, { token: (await createToken(h, { poolId: 'pool-ssh-other' })).secret });
    const { file } = await issue(other.body.nodeId);
    const login = await ssh(sshd.port, key, file, 'echo ok');
    expect(login.code).toBe(255);
    expect(login.stdout).toBe('');
    expect(login.stderr).toContain('Permission denied (publickey)');
    expect(sshd.log()).toContain('Certificate does not contain an authorized principal');
  });

  it('an expired certificate is refused', async () => {
    // Issued two hours ago for 15 minutes: the service's clock is its `now`, the signature real.
    const { row, certificate } = await issueSshCertificate(
      h.deps,
      {
        principal: OPERATOR,
        nodeId,
        publicKey: readFileSync(`${key}.pub`, 'utf8'),
        reason: 'long ago',
        ttlMs: 15 * 60_000,
      },
      new Date(Date.now() - 2 * 3_600_000),
    );
    expect(row.validBefore.getTime()).toBeLessThan(Date.now());
    const file = `${key}-expired-cert.pub`;
    writeFileSync(file, `${certificate}\n`);
    const login = await ssh(sshd.port, key, file, 'echo ok');
    expect(login.code).toBe(255);
    expect(login.stderr).toContain('Permission denied (publickey)');
    expect(sshd.log()).toContain('Certificate invalid: expired');
  });

  it('a revoked certificate is refused once the agent has rewritten the KRL', async () => {
    const { serial, file } = await issue(nodeId);
    expect((await ssh(sshd.port, key, file, 'echo before')).stdout).toBe('before\n');
    const revoked = await call(h, 'POST', `/v1/nodes/${nodeId}/ssh-certificates/${serial}/revoke`, {
      body: { reason: 'the laptop was lost' },
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({
      serial,
      revokedBy: 'key:bootstrap-operator',
      revokedReason: 'the laptop was lost',
    });
    await eventually(async () => (await krlSerials()).includes(`serial: ${serial}\n`), 10_000, 100);
    const login = await ssh(sshd.port, key, file, 'echo ok');
    expect(login.code).toBe(255);
    expect(login.stderr).toContain('Permission denied (publickey)');
    expect(sshd.log()).toMatch(
      new RegExp(`ED25519-CERT SHA256:\\S+ revoked by file ${sshFilesIn(sshDir).krl}`),
    );
    // Another certificate for the same key is not revoked with it: the KRL names serials.
    const fresh = await issue(nodeId);
    expect((await ssh(sshd.port, key, fresh.file, 'echo after')).stdout).toBe('after\n');
  });
});

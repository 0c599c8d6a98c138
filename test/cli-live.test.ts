import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { seedPoolNode } from './support/builders';
import { BIN, useCli } from './support/cli';
import { allocate, call } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();
const cli = useCli(h);
const { drydock } = cli;

/** The binary, running on: its stdout so far, and a promise of its exit code. */
function running(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, DRYDOCK_API: cli.api, DRYDOCK_TOKEN: h.operatorKey },
  });
  const seen = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (seen.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (seen.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, seen, exited };
}

/** Whether some request sits in the event feed's long-poll (the CLI's, in these tests). */
const longPolling = async () => h.deps.feedWakeups.waiting('') > 0;

describe('the CLI on the event feed’s long-poll', () => {
  it('nodes events --follow: the history, then each new event of the node as it commits, from one waiting request', async () => {
    const node = await seedPoolNode(h, 'pool-live-follow');
    const other = await seedPoolNode(h, 'pool-live-other');
    await call(h, 'POST', `/v1/nodes/${node}/cordon`, { body: { reason: 'before' } });
    const follower = running(['nodes', 'events', node, '--follow', '--json']);
    const types = () =>
      follower.seen.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { type: string; nodeId: string }).type);
    try {
      await eventually(async () => types().length === 1 && (await longPolling()));
      // Another node's event wakes nothing that prints.
      await call(h, 'POST', `/v1/nodes/${other}/cordon`, { body: { reason: 'elsewhere' } });
      await call(h, 'POST', `/v1/nodes/${node}/uncordon`);
      await eventually(async () => types().length === 2, 5_000);
      expect(types()).toEqual(['node.cordoned', 'node.uncordoned']);
      expect(follower.seen.stdout).not.toContain(other);
      // Waiting again, on the server.
      await eventually(longPolling);
    } finally {
      follower.child.kill('SIGINT');
    }
  });

  it('nodes events --follow of a node that does not exist fails at once', async () => {
    const run = await drydock(['nodes', 'events', 'node_01jz0000000000000000000000', '--follow']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/NOT_FOUND|not found/i);
    expect(run.stdout).toBe('');
  });

  it('--wait sits on the node’s events and ends when the drain does', async () => {
    const node = await seedPoolNode(h, 'pool-live-wait');
    const allocation = await allocate(h, node, 'acme');
    const waiter = running(['nodes', 'drain', node, '--wait', '--json', '--timeout', '1m']);
    const drain = await eventually(async () => {
      const [op] = (await call(h, 'GET', `/v1/operations?nodeId=${node}&kind=drain`)).body.items;
      return op?.status === 'running' ? op : undefined;
    });
    await eventually(longPolling);
    expect(waiter.seen.stdout).toBe('');

    expect((await call(h, 'POST', `/v1/allocations/${allocation}/release`)).status).toBe(200);
    expect(await waiter.exited).toBe(0);
    expect(JSON.parse(waiter.seen.stdout)).toMatchObject({
      id: drain.id,
      kind: 'drain',
      status: 'succeeded',
    });
  });

  it('--wait --timeout still stops at the timeout, the drain going on', async () => {
    const node = await seedPoolNode(h, 'pool-live-timeout');
    await allocate(h, node, 'acme');
    const started = Date.now();
    const run = await drydock(['nodes', 'drain', node, '--wait', '--timeout', '4s']);
    const took = Date.now() - started;
    expect(run.stderr).toMatch(/still running after 4s/);
    expect(run.code).not.toBe(0);
    expect(took).toBeGreaterThanOrEqual(4_000);
    expect(took).toBeLessThan(15_000);
    const [op] = (await call(h, 'GET', `/v1/operations?nodeId=${node}&kind=drain`)).body.items;
    expect(op.status).toBe('running');
    await call(h, 'DELETE', `/v1/operations/${op.id}`, { body: {} });
  });
});

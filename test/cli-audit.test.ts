import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { appendEvent } from '../db/events';
import { seedPoolNode } from './support/builders';
import { BIN, useCli } from './support/cli';
import { call } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);
const { drydock } = cli;

describe('drydock audit', () => {
  it("prints a person's entries newest first as a table, and as JSON lines with --json", async () => {
    const node = await seedPoolNode(h, 'pool-b7');
    const hostname: string = (await call(h, 'GET', `/v1/nodes/${node}`)).body.hostname;
    const record = (actor: string, type: 'node.cordoned' | 'node.drained', reason: string) =>
      h.db.transaction((tx) => appendEvent(tx, { type, nodeId: node, actor, reason }));
    await record('user:alice@example.com', 'node.cordoned', 'rack b7 PSU <swap>');
    await record('key:ops', 'node.cordoned', 'not alice');
    await record('user:alice@example.com', 'node.drained', 'rack b7 drained');

    const human = await drydock(['audit', '--actor', 'alice@example.com', '--since', '24h']);
    expect(human.code, human.stderr).toBe(0);
    const [header, ...lines] = human.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^TIME\s+ACTOR\s+EVENT\s+TARGET\s+REASON$/);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      new RegExp(`^\\S+Z\\s+user:alice@example\\.com\\s+node\\.drained\\s+${hostname}\\s+rack b7 drained$`),
    );
    expect(lines[1]).toMatch(/\snode\.cordoned\s+\S+\s+rack b7 PSU <swap>$/);

    const json = await drydock([
      'audit',
      '--json',
      '--actor',
      'user:alice@example.com',
      '--type',
      'node.cordon',
    ]);
    expect(json.code, json.stderr).toBe(0);
    const entries = json.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      nodeId: node,
      hostname,
      actor: 'user:alice@example.com',
      type: 'node.cordoned',
      reason: 'rack b7 PSU <swap>',
      description: expect.any(String),
    });

    // A full page says how to get the older ones.
    const paged = await drydock(['audit', '--actor', 'alice@example.com', '--limit', '1']);
    const cursor = /--cursor (\d+)/.exec(paged.stderr)![1]!;
    const older = await drydock(['audit', '--json', '--actor', 'alice@example.com', '--cursor', cursor]);
    expect(JSON.parse(older.stdout.trimEnd()).reason).toBe('rack b7 PSU <swap>');

    // Nothing since a time after them.
    const none = await drydock([
      'audit',
      '--json',
      '--actor',
      'alice@example.com',
      '--since',
      '2099-01-01T00:00:00Z',
    ]);
    expect(none.stdout).toBe('');
  });

  it('--follow prints new entries of the actor as they commit, until stopped', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'audit', '--follow', '--json', '--actor', 'bob@example.com'],
      {
        env: { ...process.env, DRYDOCK_API: cli.api, DRYDOCK_TOKEN: h.operatorKey },
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    try {
      await eventually(async () => h.deps.feedWakeups.waiting('') > 0);
      await h.db.transaction(async (tx) => {
        await appendEvent(tx, { type: 'node.cordoned', actor: 'key:ops', reason: 'not bob' });
        await appendEvent(tx, { type: 'node.cordoned', actor: 'user:bob@example.com', reason: 'bob' });
      });
      await eventually(async () => stdout.includes('\n'));
      expect(JSON.parse(stdout)).toMatchObject({ actor: 'user:bob@example.com', reason: 'bob' });
    } finally {
      child.kill('SIGINT');
    }
  });

  it('refuses bad flags before sending anything', async () => {
    for (const args of [
      ['audit', '--since', 'yesterday'],
      ['audit', '--until', '2026-12-05'],
      ['audit', '--type', 'Node.'],
      ['audit', '--limit', '0'],
      ['audit', '--cursor', 'abc'],
      ['audit', '--actor', 'a b'],
    ]) {
      const run = await drydock(args, { api: cli.deadApi });
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^error: usage: /);
    }
    const follow = await drydock(['audit', '--follow', '--until', '1h'], { api: cli.deadApi });
    expect(follow.code).toBe(2);
    expect(follow.stderr).toMatch(/--follow .* no --until/);
  });
});

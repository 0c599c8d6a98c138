import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { seedPoolNode } from './support/builders';
import { BIN, useCli } from './support/cli';
import { call } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);
const { drydock } = cli;

describe('drydock events', () => {
  it('prints the fleet feed oldest first, by type prefix, from a cursor, one JSON event a line', async () => {
    const [a, b] = [await seedPoolNode(h, 'pool-a'), await seedPoolNode(h, 'pool-b')];
    await call(h, 'POST', `/v1/nodes/${a}/cordon`, { body: { reason: 'rack swap' } });
    await call(h, 'POST', `/v1/nodes/${b}/cordon`);
    await call(h, 'POST', `/v1/nodes/${a}/uncordon`);

    const human = await drydock(['events', '--type', 'node.cordon']);
    expect(human.code).toBe(0);
    const [header, ...lines] = human.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^TIME\s+NODE\s+TYPE\s+ACTOR\s+REASON$/);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^\\S+Z\\s+${a}\\s+node\\.cordoned\\s+key:\\S+\\s+rack swap$`));
    expect(lines[1]).toMatch(new RegExp(`^\\S+Z\\s+${b}\\s+node\\.cordoned\\s`));
    const cursor = /--after (\d+)/.exec(human.stderr)![1]!;

    const json = await drydock(['events', '--json']);
    const all = json.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(all.map((e) => [e.nodeId, e.type])).toEqual([
      [a, 'node.cordoned'],
      [b, 'node.cordoned'],
      [a, 'node.uncordoned'],
    ]);
    const after = await drydock(['events', '--json', '--after', all[0].id]);
    expect(
      after.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([all[1].id, all[2].id]);
    // Filtered out events are passed: the cursor printed is past the last event.
    expect(Number(cursor)).toBe(Number(all[2].id));
  });

  it('--follow prints new events as they commit until stopped', async () => {
    const node = await seedPoolNode(h, 'pool-f');
    const start = JSON.parse((await drydock(['events', '--json'])).stdout.trimEnd().split('\n').at(-1)!).id;
    const child = spawn(process.execPath, [BIN, 'events', '--follow', '--json', '--after', start], {
      env: { ...process.env, DRYDOCK_API: cli.api, DRYDOCK_TOKEN: h.operatorKey },
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    try {
      await eventually(async () => h.deps.feedWakeups.waiting('') > 0);
      await call(h, 'POST', `/v1/nodes/${node}/cordon`);
      await eventually(async () => stdout.includes('\n'));
      expect(JSON.parse(stdout)).toMatchObject({ nodeId: node, type: 'node.cordoned' });
    } finally {
      child.kill('SIGINT');
    }
  });

  it('refuses a bad --after or --type before sending anything', async () => {
    for (const args of [
      ['events', '--after', 'abc'],
      ['events', '--type', 'Node.'],
    ]) {
      const run = await drydock(args, { api: cli.deadApi });
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^error: usage: /);
    }
  });
});

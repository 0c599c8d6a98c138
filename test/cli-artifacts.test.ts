import { describe, expect, it } from 'vitest';
import { newId } from '../domain/ids';
import { seedPoolNode } from './support/builders';
import { rows, useCli } from './support/cli';
import { call, seedNode, seedPool, tenantKey } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);
const { drydock } = cli;

const copy = (nodeId: string, artifactId: string, path: string) =>
  call(h, 'PUT', `/v1/nodes/${nodeId}/artifact-copies/${artifactId}`, { body: { path } });

describe('drydock artifacts', () => {
  it("lists a node's copies and an artifact's copies, as a table or the API's page with --json", async () => {
    const a = await seedPoolNode(h, 'pool-cli-art');
    const b = await seedNode(h, { poolId: 'pool-cli-art', tenantId: 'acme' });
    await copy(a, 'weights-70b', '/data/models/w70');
    await copy(a, 'dataset-c4', '/data/sets/c4');
    await copy(b, 'weights-70b', '/mnt/w70');

    const listed = await drydock(['artifacts', 'list', a]);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(listed.stdout.split('\n')[0]).toMatch(/^ARTIFACT\s+NODE\s+PATH\s+RECORDED$/);
    expect(rows(listed.stdout)).toEqual([
      expect.stringMatching(new RegExp(`^dataset-c4\\s+${a}\\s+/data/sets/c4\\s+\\S+Z$`)),
      expect.stringMatching(new RegExp(`^weights-70b\\s+${a}\\s+/data/models/w70\\s+\\S+Z$`)),
    ]);

    const json = await drydock(['artifacts', 'copies', 'weights-70b', '--json']);
    expect(json.code).toBe(0);
    const page = JSON.parse(json.stdout);
    expect(page).toEqual((await call(h, 'GET', '/v1/artifacts/weights-70b/copies')).body);
    expect(page.items.map((c: { nodeId: string; path: string }) => [c.nodeId, c.path])).toEqual([
      [a, '/data/models/w70'],
      [b, '/mnt/w70'],
    ]);

    const paged = await drydock(['artifacts', 'copies', 'weights-70b', '--limit', '1']);
    expect(rows(paged.stdout)).toHaveLength(1);
    expect(paged.stderr).toBe('more artifact copies than these 1: add --all\n');
    const all = await drydock(['artifacts', 'copies', 'weights-70b', '--limit', '1', '--all']);
    expect(rows(all.stdout)).toHaveLength(2);

    const none = await drydock(['artifacts', 'copies', 'nowhere-set']);
    expect(none).toMatchObject({ code: 0, stdout: '', stderr: 'no artifact copies match\n' });
  });

  it('a node out of sight exits 4; a key without compute:nodes:read exits 5; a malformed ARTIFACT is a usage error', async () => {
    await seedPool(h, { id: 'pool-cli-other', tenantId: 'globex' });
    const foreign = await seedNode(h, { poolId: 'pool-cli-other', tenantId: 'globex' });
    const reader = await tenantKey(h, 'hooli', ['compute:nodes:read'], 'hooli-cli-reader');
    const writer = await tenantKey(h, 'hooli', ['compute:artifacts:write'], 'hooli-cli-writer');
    const hidden = await drydock(['artifacts', 'list', foreign], { token: reader.secret });
    expect(hidden.code).toBe(4);
    expect(hidden.stderr).toContain('NOT_FOUND');
    expect((await drydock(['artifacts', 'list', newId('node')])).code).toBe(4);
    const forbidden = await drydock(['artifacts', 'copies', 'weights-70b'], { token: writer.secret });
    expect(forbidden.code).toBe(5);
    await cli.refuses([
      [
        ['artifacts', 'copies', 'weights/70b'],
        "ARTIFACT must be an artifact id: 1–128 of letters, digits and . _ : -, starting with a letter or digit, got 'weights/70b'",
      ],
      [
        ['artifacts', 'list', 'weights-70b'],
        'NODE must look like node_ followed by 26 lowercase ULID characters',
      ],
      [['artifacts', 'copies', 'weights-70b', '--limit', '101'], '--limit'],
    ]);
  });
});

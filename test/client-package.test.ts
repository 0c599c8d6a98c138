import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readNode, useCli } from './support/cli';
import { retiredNode } from './support/decommission';
import { eventsOf, seedPool } from './support/fixtures';
import { useHarness } from './support/harness';
import { runNode } from './support/run-process';

/**
 * @drydock/client outside the repository, as packages/client/README.md says to use it: the tarball
 * of `npm run tarball -w @drydock/client` installed by npm into a project of its own, whose copy
 * of the example runs on plain Node 24 (no tsx) and type-checks under `nodenext`.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

const h = useHarness();
const cli = useCli(h);

const dir = mkdtempSync(join(tmpdir(), 'drydock-client-package-'));
const project = join(dir, 'project');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  await run('npm', ['run', 'tarball', '-w', '@drydock/client', '--', dir], { cwd: ROOT });
  const [tarball] = readdirSync(dir).filter((name) => name.endsWith('.tgz'));
  expect(tarball).toBe('drydock-client-0.1.0.tgz');
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'runbooks', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, tarball!)], {
    cwd: project,
  });
  copyFileSync(
    join(project, 'node_modules/@drydock/client/examples/decommission.ts'),
    join(project, 'decommission.ts'),
  );
  await seedPool(h, { id: 'pool-outside', tenantId: 'acme' });
}, 180_000);

describe('the @drydock/client tarball', () => {
  it('ships JavaScript and declarations, not the TypeScript source', async () => {
    const { stdout } = await run('tar', ['-tzf', join(dir, 'drydock-client-0.1.0.tgz')]);
    const files = stdout.trim().split('\n').sort();
    expect(files).toEqual([
      'package/README.md',
      'package/dist/errors.d.ts',
      'package/dist/errors.js',
      'package/dist/index.d.ts',
      'package/dist/index.js',
      'package/dist/schema.d.ts',
      'package/dist/schema.js',
      'package/examples/decommission.ts',
      'package/package.json',
    ]);
  });

  it('runs the example on plain Node 24 in a project of its own: the node ends decommissioned, once', async () => {
    const { nodeId } = await retiredNode(h, 'pool-outside');
    const reason = 'EOL: leaving the fleet';

    const exit = await runNode(
      [join(project, 'decommission.ts'), nodeId, '--yes', '--reason', reason, '--operator', 'bob'],
      { DRYDOCK_API: cli.api, DRYDOCK_TOKEN: h.operatorKey },
      90_000,
    );

    expect(exit.code, `stdout:\n${exit.stdout}\nstderr:\n${exit.stderr}`).toBe(0);
    expect(exit.stdout).toMatch(/^decommission op_[0-9a-z]{26} succeeded at /m);
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'decommissioned' });
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toMatchObject([
      { reason, data: { operator: 'bob' } },
    ]);
  });

  it('type-checks under nodenext, library files included', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          target: 'es2023',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        include: ['decommission.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const checked = await runNode([tsc, '-p', project], {}, 120_000);
    expect(checked, checked.stdout).toMatchObject({ code: 0, stdout: '' });
  });
});

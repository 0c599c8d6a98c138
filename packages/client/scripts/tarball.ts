import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm run tarball -w @drydock/client [-- DIR]`: the package as a tarball for projects outside this
 * repository, written to DIR (default: where npm was run). The repository imports the TypeScript
 * source; a tarball carries JavaScript and declarations instead, since Node refuses to strip types
 * under node_modules and a `nodenext` TypeScript project type-checks a package's .ts files as its
 * own. Built in a directory of its own so no output ever sits beside the source.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const destination = resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[2] ?? '.');
const stage = mkdtempSync(join(tmpdir(), 'drydock-client-'));
try {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')],
    {
      stdio: 'inherit',
    },
  );
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  delete manifest.scripts;
  manifest.exports = { '.': { types: './dist/index.d.ts', default: './dist/index.js' } };
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const path of ['README.md', 'examples'])
    cpSync(join(root, path), join(stage, path), { recursive: true });
  // From the staged directory, outside the repository: npm packs it alone, not as a workspace.
  execFileSync('npm', ['pack', '--pack-destination', destination], { cwd: stage, stdio: 'inherit' });
} finally {
  rmSync(stage, { recursive: true, force: true });
}

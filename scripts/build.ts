import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { build, type Metafile } from 'esbuild';
import { COMPILED_BUNDLE_FILES, workflowBundleSources } from '../worker';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The programs, as dist/<name>.js: each is a thin file in entry/ that calls its module's main. */
export const PROGRAMS = ['api', 'worker', 'drydock', 'drydock-agent', 'drydock-bridge'];

/**
 * Folders the code reads at run time through `new URL('./<folder>', import.meta.url)` from a module
 * one level below the root (db/schema-version.ts, console/live-script.ts). The bundles and their chunks
 * sit at the top of dist/, so the same relative URL finds the copies there.
 */
const RUNTIME_FOLDERS = [
  { from: 'db/migrations', to: 'migrations' },
  { from: 'console/assets', to: 'assets' },
];

export interface BuiltDist {
  outDir: string;
  /** esbuild's account of the build: which files it wrote and what each imports. */
  metafile: Metafile;
}

/**
 * `npm run build`: the five programs bundled for plain Node into `outDir` (default dist/), the
 * folders they read beside them, and the worker's workflow bundles prebuilt.
 *
 * esbuild and not tsc: the sources import each other without file extensions (moduleResolution
 * Bundler), which Node's ESM loader cannot resolve in tsc's one-file-per-module output. Packages
 * stay external (node_modules beside dist/ at run time, native modules included) but for the
 * workspace's own client, which is bundled like the rest of the source; shared code goes into
 * chunks so the programs share one copy of it.
 */
export async function buildDist(options: { outDir?: string } = {}): Promise<BuiltDist> {
  const outDir = resolve(options.outDir ?? join(root, 'dist'));
  // A chunk of an earlier build would linger under a name nothing imports any more.
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: PROGRAMS.map((name) => ({ in: `entry/${name}.ts`, out: name })),
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    packages: 'external',
    // The repository's own workspace package is source to bundle, not a package to install.
    alias: { '@drydock/client': './packages/client/src/index.ts' },
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  for (const folder of RUNTIME_FOLDERS) {
    await cp(join(root, folder.from), join(outDir, folder.to), { recursive: true });
  }
  await writeWorkflowBundles(outDir);
  return { outDir, metafile: result.metafile };
}

/**
 * The workflow bundles the compiled worker loads instead of running webpack at every start: one
 * without tracing and one with its interceptors, since workflow spans need them inside the bundle
 * and an untraced worker should not run them (worker.ts `compiledWorkflowBundle` picks).
 */
async function writeWorkflowBundles(outDir: string): Promise<void> {
  const logger = new DefaultLogger('WARN');
  for (const traced of [false, true]) {
    const { code } = await bundleWorkflowCode({ ...workflowBundleSources(traced), logger });
    await writeFile(join(outDir, traced ? COMPILED_BUNDLE_FILES.traced : COMPILED_BUNDLE_FILES.plain), code);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const { outDir } = await buildDist();
  process.stdout.write(`built ${outDir} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

/**
 * What a bundle is built from: the workflows' entry module, the workflow interceptor modules, and
 * the modules every workflow run shares instead of evaluating its own copy (worker.ts says which).
 */
export interface BundleSources {
  workflowsPath: string;
  workflowInterceptorModules: string[];
  preloadModules: string[];
}

const self = fileURLToPath(import.meta.url);

/**
 * Bundles the workflows in a short-lived child process and returns the code. Webpack's memory
 * (~115 MB in the worker, measured by bench worker-memory) is never returned to the system by the
 * process that ran it; in a child it ends with the child, and the worker keeps only the bundle.
 */
export async function bundleInChildProcess(sources: BundleSources): Promise<{ code: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'drydock-bundle-'));
  const out = join(dir, 'workflows.js');
  try {
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), self], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, DRYDOCK_BUNDLE_JOB: JSON.stringify({ ...sources, out }) },
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (exitCode, signal) => resolve(signal ? -1 : exitCode));
    });
    if (code !== 0) throw new Error(`bundling the workflows failed (child exited with ${code})`);
    return { code: await readFile(out, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function bundleJob(job: BundleSources & { out: string }): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: job.workflowsPath,
    workflowInterceptorModules: job.workflowInterceptorModules,
    preloadModules: job.preloadModules,
    // Its errors still reach stderr (webpack's compile errors are thrown, with their messages).
    logger: new DefaultLogger('WARN'),
  });
  await writeFile(job.out, code);
}

if (process.argv[1] === self && process.env.DRYDOCK_BUNDLE_JOB) {
  bundleJob(JSON.parse(process.env.DRYDOCK_BUNDLE_JOB) as BundleSources & { out: string }).catch(
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}

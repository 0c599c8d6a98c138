/**
 * `npm run bench -- <name> [options]`: runs `bench/<name>.ts`. A benchmark is one file in `bench/`
 * whose default export comes from `defineBenchmark` (bench/support/benchmark.ts); adding a file is
 * all it takes to add one. `npm run bench` alone runs every one in its quick mode and writes
 * docs/benchmarks.md (bench/support/run-all.ts), `--before FILE` keeping an earlier commit's page
 * below it; `list` (or an unknown name) lists what there is.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UsageError, type Benchmark } from './support/benchmark';
import { runAll } from './support/run-all';

const benchDir = fileURLToPath(new URL('./', import.meta.url));

function available(): string[] {
  return readdirSync(benchDir)
    .filter((file) => file.endsWith('.ts') && file !== 'run.ts' && !file.endsWith('.d.ts'))
    .map((file) => file.slice(0, -'.ts'.length))
    .sort();
}

async function load(name: string): Promise<Benchmark> {
  const module = (await import(pathToFileURL(`${benchDir}${name}.ts`).href)) as { default?: Benchmark };
  if (!module.default || typeof module.default.run !== 'function') {
    throw new Error(`bench/${name}.ts has no default export from defineBenchmark`);
  }
  return module.default;
}

async function list(): Promise<string> {
  const names = available();
  const width = Math.max(0, ...names.map((n) => n.length));
  const lines = await Promise.all(names.map(async (n) => `  ${n.padEnd(width)}  ${(await load(n)).summary}`));
  return [
    'usage: npm run bench                        every benchmark, quick, then docs/benchmarks.md',
    '       npm run bench -- --before FILE       the same, with FILE (the page an earlier commit',
    '                                            wrote) kept under "Before" for comparison',
    '       npm run bench -- <name> [options]    one (--help after a name lists its options)',
    '',
    'benchmarks:',
    ...lines,
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--before') {
    const names = available();
    const earlier = name === '--before' ? args[0] : undefined;
    if (name === '--before' && !earlier) {
      console.error('--before needs the docs/benchmarks.md an earlier commit wrote');
      return 2;
    }
    return runAll(
      await Promise.all(names.map(async (n) => ({ name: n, quick: (await load(n)).quick }))),
      earlier,
    );
  }
  if (name === '--help' || name === '-h' || name === 'list') {
    console.log(await list());
    return 0;
  }
  if (!available().includes(name)) {
    console.error(`no benchmark named ${JSON.stringify(name)}\n`);
    console.error(await list());
    return 2;
  }
  const benchmark = await load(name);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`npm run bench -- ${name} [options]\n\n${benchmark.summary}\n\noptions:\n${benchmark.usage}`);
    return 0;
  }
  try {
    return await benchmark.run(args);
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\noptions:\n${benchmark.usage}`);
      return 2;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Teardown } from './teardown';
/**
 * One benchmark: a file `bench/<name>.ts` whose default export is `defineBenchmark({...})`.
 * `bench/run.ts` finds it by its file name; nothing else needs to know it exists.
 */
export interface Benchmark {
  /** One line for the list `npm run bench` prints. */
  summary: string;
  /** The options it takes, one per line, for `npm run bench -- <name> --help`. */
  usage: string;
  /**
   * The options of its quick mode, the one `npm run bench` (no name) runs before writing
   * docs/benchmarks.md: small enough that every benchmark together takes minutes, large enough that
   * its figures mean what the full run's do.
   */
  quick: string[];
  /** Runs it with the arguments after its name; resolves to the process exit code. */
  run(args: string[]): Promise<number>;
}

/**
 * One row of docs/benchmarks.md: a measured figure beside its goal and its baseline from the same
 * run. Every benchmark's result JSON (`writeResult`) carries its rows as `figures: Figure[]`.
 */
export interface Figure {
  /** What was measured, e.g. `cordon throughput, API vs pgbench (concurrency 32)`. */
  figure: string;
  /** The goal as written in the issue, e.g. `≥ 0.5×`, `≤ 100 ms`. */
  goal: string;
  /** The measured value with its unit, e.g. `3,702 req/s`. */
  value: string;
  /** The same-run baseline with its unit (or `—` for an absolute goal), e.g. `7,400 tps pgbench`. */
  baseline: string;
  /** value ÷ baseline, or null for an absolute goal. */
  ratio: number | null;
  /** Whether the goal was met in this run. */
  met: boolean;
}

export function defineBenchmark(benchmark: Benchmark): Benchmark {
  return benchmark;
}

/** Progress lines on stderr, stamped with the seconds since the benchmark began. */
export function createLog(started = Date.now()) {
  return (line: string) => {
    const seconds = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
    process.stderr.write(`[${seconds}s] ${line}\n`);
  };
}

export type Log = ReturnType<typeof createLog>;

/** A positive integer option within [min, max], or a usage error naming it. */
export function intOption(name: string, raw: string | undefined, fallback: number, min: number, max: number) {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, not ${raw}`);
  }
  return value;
}

/** The values of `args` for `options` (strict: an unknown option or a stray word is a usage error). */
export function optionValues<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A mistake in the command line: the dispatcher prints it with the usage, exit code 2. */
export class UsageError extends Error {}

/**
 * The `run` of a benchmark that sets services up: parses its options, measures with a log and a
 * teardown, and always tears down (also on Ctrl-C), saying how long it all took.
 */
export function measured<O>(
  parse: (args: string[]) => O,
  measure: (options: O, teardown: Teardown, log: Log) => Promise<number>,
): (args: string[]) => Promise<number> {
  return async (args) => {
    const options = parse(args);
    const log = createLog();
    const teardown = new Teardown(log);
    const stopInterrupt = teardown.onInterrupt();
    const began = Date.now();
    try {
      return await measure(options, teardown, log);
    } finally {
      const clean = await teardown.run();
      stopInterrupt();
      log(
        `${clean ? 'torn down' : 'torn down with errors'}; ${((Date.now() - began) / 1000).toFixed(1)} s in all`,
      );
    }
  };
}

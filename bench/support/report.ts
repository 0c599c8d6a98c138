import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const resultsDir = fileURLToPath(new URL('../results/', import.meta.url));

/** A plain text table: the first column left-aligned, the rest right-aligned. */
export function formatTable(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/**
 * The file a benchmark run names its result in, when `npm run bench` (no name) started it: the
 * runner reads the result it points at (bench/run.ts).
 */
export const RESULT_NOTE_ENV = 'BENCH_RESULT_NOTE';

/** Writes `bench/results/<name>-<timestamp>.json` and returns its path. */
export function writeResult(name: string, result: unknown): string {
  mkdirSync(resultsDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = `${resultsDir}${name}-${stamp}.json`;
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  const note = process.env[RESULT_NOTE_ENV];
  if (note) writeFileSync(note, path);
  return path;
}

/** Where the figures came from: commit, machine, load. */
export function environment() {
  let commit: string | null = null;
  let dirty = false;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    dirty = execFileSync('git', ['status', '--porcelain'], { encoding: 'utf8' }).trim() !== '';
  } catch {
    // not a git checkout
  }
  return {
    commit,
    dirty,
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? null,
    loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import type { Figure } from './benchmark';
import { environment, RESULT_NOTE_ENV } from './report';

const runner = fileURLToPath(new URL('../run.ts', import.meta.url));
const docPath = fileURLToPath(new URL('../../docs/benchmarks.md', import.meta.url));
/** A quick run that takes longer than this is stopped (its teardown still runs) and counts as failed. */
const QUICK_TIMEOUT_MS = 4 * 60_000;

interface Row extends Figure {
  benchmark: string;
}

/**
 * `npm run bench` without a name: every benchmark in its quick mode, one after another, each in a
 * process of its own (`tsx bench/run.ts <name> ...quick`), then docs/benchmarks.md from the
 * `figures` of each run's result. A benchmark that fails, or writes no figures, still has a row.
 */
export async function runAll(
  benchmarks: { name: string; quick: string[] }[],
  earlierPage?: string,
): Promise<number> {
  // Read first: a missing file fails before minutes of benchmarks.
  const earlier = earlierPage === undefined ? undefined : earlierRun(readFileSync(earlierPage, 'utf8'));
  const before = environment();
  const began = Date.now();
  const rows: Row[] = [];
  const notes = mkdtempSync(join(tmpdir(), 'drydock-bench-'));
  try {
    for (const { name, quick } of benchmarks) {
      process.stderr.write(`\n── npm run bench -- ${[name, ...quick].join(' ')}\n`);
      const note = join(notes, name);
      const started = Date.now();
      const exit = await runChild(name, quick, note);
      const seconds = Math.round((Date.now() - started) / 1000);
      rows.push(...figuresOf(name, exit, note));
      process.stderr.write(`── ${name}: ${exit === 0 ? 'done' : `failed (${exit})`} in ${seconds} s\n`);
    }
  } finally {
    rmSync(notes, { recursive: true, force: true });
  }
  const after = environment();
  const text = document(rows, before, after, Math.round((Date.now() - began) / 1000), earlier);
  // In the project's style, as `prettier --check .` wants every committed file.
  const style = await resolveConfig(docPath);
  writeFileSync(docPath, await format(text, { ...style, filepath: docPath }));
  process.stderr.write(`\nwrote ${docPath}\n`);
  return rows.every((r) => r.met) ? 0 : 1;
}

/** Runs one benchmark's quick mode; resolves to its exit code, or a description of how it ended. */
function runChild(name: string, args: string[], note: string): Promise<number | string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', runner, name, ...args], {
      stdio: 'inherit',
      env: { ...process.env, [RESULT_NOTE_ENV]: note },
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM'); // its teardown drops the database and stops the servers
    }, QUICK_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve(`timed out after ${QUICK_TIMEOUT_MS / 60_000} min`);
      else resolve(code ?? `killed by ${signal}`);
    });
  });
}

function figuresOf(benchmark: string, exit: number | string, note: string): Row[] {
  const failed = (value: string): Row[] => [
    { benchmark, figure: '—', goal: '—', value, baseline: '—', ratio: null, met: false },
  ];
  let result: { figures?: Figure[] };
  try {
    result = JSON.parse(readFileSync(readFileSync(note, 'utf8'), 'utf8'));
  } catch {
    return failed(typeof exit === 'number' ? `failed: exit ${exit}, no result` : `failed: ${exit}`);
  }
  if (!Array.isArray(result.figures) || result.figures.length === 0) {
    return failed(`no figures in its result (exit ${exit})`);
  }
  // A run that wrote its result and then failed (e.g. drains missing) met nothing.
  return result.figures.map((f) => ({ benchmark, ...f, met: f.met && exit === 0 }));
}

/**
 * What an earlier commit's page says of its run: from its run line to its end, its headings one
 * level down. The comparison is the reader's: the benchmarks and their goals may differ.
 */
function earlierRun(page: string): string {
  const lines = page.split('\n');
  const start = lines.findIndex((line) => line.startsWith('- Run:'));
  if (start < 0) throw new Error('--before: not a page `npm run bench` wrote (no "- Run:" line)');
  return lines
    .slice(start)
    .map((line) => (line.startsWith('#') ? `#${line}` : line))
    .join('\n')
    .trim();
}

function document(
  rows: Row[],
  before: ReturnType<typeof environment>,
  after: ReturnType<typeof environment>,
  seconds: number,
  earlier?: string,
): string {
  const cell = (value: string | number) => String(value).replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const commit = before.commit
    ? `${before.commit.slice(0, 12)}${before.dirty ? ' (uncommitted changes)' : ''}`
    : 'unknown';
  return [
    '# Benchmarks',
    '',
    '<!-- Generated by `npm run bench`: never edit by hand, run it again. -->',
    '',
    'Generated by `npm run bench`, which runs every benchmark in `bench/` in its quick mode, one after',
    'another, and writes this page from their results; do not edit it by hand. Each figure is judged',
    'against a baseline measured in the same run on the same machine, so a ratio means more than an',
    'absolute value. `npm run bench -- list` lists the benchmarks, `npm run bench -- <name> --help`',
    'their options; a full run of one is `npm run bench -- <name>`.',
    '',
    `- Run: ${new Date().toISOString().slice(0, 16)}Z, ${seconds} s in all; commit ${commit}; node ${before.node}`,
    `- Machine: ${before.cpus} cores, ${before.cpuModel ?? 'unknown CPU'}`,
    `- Load average (1, 5, 15 min): ${before.loadavg.join(', ')} before, ${after.loadavg.join(', ')} after`,
    '',
    '| benchmark | figure | goal | value | baseline | ratio | met |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${[
          r.benchmark,
          r.figure,
          r.goal,
          r.value,
          r.baseline,
          r.ratio === null ? '—' : `${r.ratio}×`,
          r.met ? 'yes' : '**no**',
        ]
          .map(cell)
          .join(' | ')} |`,
    ),
    ...(earlier
      ? [
          '',
          '## Before',
          '',
          'The same `npm run bench` on an earlier commit, on this machine just before this run, as that',
          "commit's page had it (its benchmarks and goals were that commit's own):",
          '',
          earlier,
        ]
      : []),
    '',
  ].join('\n');
}

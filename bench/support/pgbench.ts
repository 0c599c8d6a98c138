import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `pgbench` with a custom script, the baseline an API benchmark compares with: the same SQL the
 * API runs, from a client that does nothing else. Every transaction is logged (`--log`), so its
 * percentiles are computed the same way as the API's, over the same kind of window.
 */
export interface PgbenchOptions {
  /** A libpq connection string or postgres:// URL. */
  url: string;
  /** Names the script and log files in `dir`. */
  name: string;
  script: string;
  /** Scratch directory for the script and the per-thread logs. */
  dir: string;
  clients: number;
  threads: number;
  seconds: number;
  seed: number;
  /** Query protocol: 'extended' (unnamed statements) unless the statements replayed are prepared. */
  mode?: 'simple' | 'extended' | 'prepared';
  /** `-D name=value`: variables the script reads as `:name`. */
  variables?: Record<string, string>;
  /** Called once pgbench runs, with its pid (for CPU accounting). */
  onStart?: (pid: number) => void;
  /** A command other than `pgbench` on PATH. */
  command?: string;
}

export interface PgbenchTransaction {
  /** Completion time, epoch milliseconds. */
  endMs: number;
  latencyMs: number;
}

export interface PgbenchResult {
  command: string;
  /** pgbench's own figures from its summary. */
  reported: {
    transactions: number | null;
    failed: number | null;
    tps: number | null;
    latencyAverageMs: number | null;
    latencyStddevMs: number | null;
    initialConnectionMs: number | null;
  };
  /** `-r`: average latency of each script line, in script order. */
  statements: { ms: number; failures: number | null; sql: string }[];
  transactions: PgbenchTransaction[];
  stdout: string;
}

export function pgbenchCommand(): string {
  return process.env.PGBENCH ?? 'pgbench';
}

export async function runPgbench(options: PgbenchOptions): Promise<PgbenchResult> {
  const scriptPath = join(options.dir, `${options.name}.sql`);
  writeFileSync(scriptPath, options.script);
  const logPrefix = join(options.dir, options.name);
  const args = [
    '-n',
    '-f',
    scriptPath,
    '-c',
    String(options.clients),
    '-j',
    String(options.threads),
    '-T',
    String(options.seconds),
    '-M',
    options.mode ?? 'extended',
    ...Object.entries(options.variables ?? {}).flatMap(([name, value]) => ['-D', `${name}=${value}`]),
    '-r',
    `--random-seed=${options.seed}`,
    '--log',
    `--log-prefix=${logPrefix}`,
    options.url,
  ];
  const command = options.command ?? pgbenchCommand();
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
    (resolve, reject) => {
      const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (err = (err + chunk.toString()).slice(-8000)));
      child.once('error', reject);
      child.once('spawn', () => options.onStart?.(child.pid!));
      child.once('close', (exit) => resolve({ code: exit, stdout: out, stderr: err }));
    },
  );
  if (code !== 0) throw new Error(`pgbench exited with ${code}: ${stderr.trim() || stdout.trim()}`);
  const shown = [command, ...args.slice(0, -1), '<database>'].join(' ');
  return {
    command: shown,
    ...parseSummary(stdout),
    transactions: readLogs(options.dir, options.name),
    stdout,
  };
}

function parseSummary(stdout: string): Pick<PgbenchResult, 'reported' | 'statements'> {
  const number = (pattern: RegExp) => {
    const match = pattern.exec(stdout);
    return match ? Number(match[1]) : null;
  };
  const reported = {
    transactions: number(/number of transactions actually processed: (\d+)/),
    failed: number(/number of failed transactions: (\d+)/),
    tps: number(/tps = ([\d.]+) \(without initial connection time\)/),
    latencyAverageMs: number(/latency average = ([\d.]+) ms/),
    latencyStddevMs: number(/latency stddev = ([\d.]+) ms/),
    initialConnectionMs: number(/initial connection time = ([\d.]+) ms/),
  };
  const statements: PgbenchResult['statements'] = [];
  const lines = stdout.split('\n');
  const start = lines.findIndex((l) => l.startsWith('statement latencies in milliseconds'));
  if (start >= 0) {
    for (const line of lines.slice(start + 1)) {
      // "  0.123  0  SELECT ..." (PG 15+: latency, failures, statement); older: latency, statement.
      const match = /^\s+([\d.]+)\s+(?:(\d+)\s+)?(\S.*)$/.exec(line);
      if (!match) break;
      statements.push({ ms: Number(match[1]), failures: match[2] ? Number(match[2]) : null, sql: match[3]! });
    }
  }
  return { reported, statements };
}

/**
 * The per-transaction logs, one file per thread (`<prefix>.<pid>`, `<prefix>.<pid>.<thread>`):
 * client_id transaction_no time script_no time_epoch time_us [...], with `time` the latency in µs
 * and time_epoch/time_us the completion time. pgbench reads its clock lazily on a busy thread, so
 * about one transaction in a thousand shows a latency near zero: harmless to a p50 or p99.
 */
function readLogs(dir: string, name: string): PgbenchTransaction[] {
  const out: PgbenchTransaction[] = [];
  for (const file of readdirSync(dir).filter((f) => f.startsWith(`${name}.`) && !f.endsWith('.sql'))) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      const fields = line.split(' ');
      if (fields.length < 6) continue;
      const latency = Number(fields[2]);
      if (!Number.isFinite(latency)) continue; // "skipped" or "failed" transactions
      out.push({ endMs: Number(fields[4]) * 1000 + Number(fields[5]) / 1000, latencyMs: latency / 1000 });
    }
  }
  return out.sort((a, b) => a.endMs - b.endMs);
}

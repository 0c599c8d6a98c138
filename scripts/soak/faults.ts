import { connect } from 'node:net';
import { postgresClient } from '../../db/client';
import type { SoakProcess, SoakShape } from './shape';
import { sleep } from './random';

/** What one fault did, as the soak could see it happen. */
export interface FaultRecord {
  name: string;
  /** Evidence the fault was real: the killed pid exited by SIGKILL, the server's port went dark, … */
  happened: boolean;
  evidence: string;
  /** From the fault to the end of the restart the orchestrator did. */
  restartMs: number;
  /** From the fault until a drain started after it ran start to end (`probe`). */
  recoveryMs: number;
}

export type Fault = (shape: SoakShape) => Promise<{ happened: boolean; evidence: string }>;

/** The faults in the order the soak injects them. */
export const FAULTS: { name: string; inject: Fault; inFlight?: boolean }[] = [
  { name: 'SIGKILL worker 1', inject: (shape) => killAndRestart(shape.workers[0]!) },
  { name: 'SIGKILL worker 2', inject: (shape) => killAndRestart(shape.workers[1] ?? shape.workers[0]!) },
  { name: 'SIGKILL API 1 mid-request', inject: (shape) => killAndRestart(shape.apis[0]!), inFlight: true },
  {
    name: 'restart Temporal',
    inject: (shape) => restartWatchingPort(shape.temporal.address, () => shape.temporal.restart()),
  },
  { name: 'restart Postgres', inject: restartPostgres },
];

/** SIGKILL, as when a machine dies; then a restart, as an orchestrator would. */
async function killAndRestart(process: SoakProcess) {
  const pid = process.pid;
  const exited = process.exited.then((code) => ({ code }));
  process.kill('SIGKILL');
  const outcome = await Promise.race([exited, sleep(10_000).then(() => null)]);
  const gone = outcome !== null && !alive(pid);
  // Killed by the signal it has no exit code; one that has an exit code had ended by itself before.
  const killed = gone && outcome.code === null;
  const lastWords = killed ? '' : process.lastOutput();
  await process.restart();
  return {
    happened: killed && process.pid !== pid,
    evidence: !gone
      ? `pid ${pid} still alive 10 s after SIGKILL`
      : killed
        ? `pid ${pid} died by SIGKILL; restarted as pid ${process.pid}`
        : `pid ${pid} had already exited by itself (exit ${outcome.code}) before the SIGKILL; restarted as pid ${process.pid}; it last wrote:\n${lastWords}`,
  };
}

/** Runs `restart` while knocking on the server's port: a restart seen refusing connections was real. */
function restartWatchingPort(address: string, restart: () => Promise<void>) {
  const [host, port] = splitAddress(address);
  return restartWatching(address, () => reachable(host, port), restart);
}

/** Runs `restart` while `answers` is asked every 50 ms; a restart seen not answering, then answering, was real. */
async function restartWatching(name: string, answers: () => Promise<boolean>, restart: () => Promise<void>) {
  let refused = 0;
  let done = false;
  const watching = (async () => {
    while (!done) {
      if (!(await answers())) refused += 1;
      await sleep(50);
    }
  })();
  try {
    await restart();
  } finally {
    done = true;
    await watching;
  }
  const back = await answers();
  return {
    happened: refused > 0 && back,
    evidence: `${name} refused ${refused} probes during the restart; answering after: ${back}`,
  };
}

/**
 * Postgres takes TCP connections while it shuts down and starts up (and refuses them in its protocol), so
 * its port is dark only for the moment between the two postmasters: the probe is a session that runs a query.
 */
async function restartPostgres(shape: SoakShape) {
  const before = await postmasterStart(shape.databaseUrl);
  const watched = await restartWatching(
    hostPortOf(shape.databaseUrl),
    () => answersQueries(shape.databaseUrl),
    () => shape.postgres.restart(),
  );
  const after = await postmasterStart(shape.databaseUrl);
  return {
    happened: watched.happened && after !== before,
    evidence: `${watched.evidence}; postmaster started ${before} then ${after}`,
  };
}

async function answersQueries(url: string): Promise<boolean> {
  const sql = postgresClient(url, { max: 1, connect_timeout: 1 });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function postmasterStart(url: string): Promise<string> {
  const sql = postgresClient(url, { max: 1 });
  try {
    const [row] = await sql<{ t: string }[]>`select pg_postmaster_start_time()::text as t`;
    return row!.t;
  } finally {
    await sql.end();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const end = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => end(false));
    socket.once('connect', () => end(true));
    socket.once('error', () => end(false));
  });
}

function splitAddress(address: string): [string, number] {
  const at = address.lastIndexOf(':');
  return [address.slice(0, at), Number(address.slice(at + 1))];
}

function hostPortOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}`;
}

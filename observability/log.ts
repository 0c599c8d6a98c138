import { pino, type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { currentLogScope } from './request-id';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  /** The process that logs (`api`, `worker`, `start`, …), on every line as `service`. */
  service: string;
  /** Where lines go; by default stdout: pretty when it is a terminal, one JSON object per line otherwise. */
  destination?: DestinationStream;
}

/**
 * The one logger of a Drydock process, created at its entry point and passed down. A line written
 * while a request or one of its activities is in progress carries its scope (`requestId`, and
 * `workflowId` and `activity` in an activity: observability/request-id.ts); children add other
 * fields. Secrets never go into a line: log ids, not credentials.
 */
export function createLogger(options: LoggerOptions): Logger {
  // JSON lines are buffered and written in batches, not with one blocking write(2) per line: with
  // an access-log line per request, a log reader that falls behind (a full pipe) would otherwise
  // stall every request of the process. pino flushes the buffer on a normal exit; a crash may
  // lose the last few lines, which only repeat what the answers and Postgres (every change's
  // event) already hold. A terminal stays synchronous.
  const destination =
    options.destination ?? (process.stdout.isTTY ? prettyLines() : pino.destination({ sync: false }));
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // A copy: pino merges the line's own fields into the object this returns.
      mixin: () => ({ ...currentLogScope() }),
    },
    destination,
  );
}

/** Lines for a person at a terminal, written to `to` (stdout unless given). */
export function prettyLines(to?: NodeJS.WritableStream): DestinationStream {
  return pretty({ sync: true, ignore: 'pid,hostname', ...(to ? { destination: to } : {}) });
}

/** A logger that drops everything (tests and tools that are told to be quiet). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

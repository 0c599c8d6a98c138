import type { LogLevel as TemporalLevel, LogMetadata, Logger as TemporalLogger } from '@temporalio/common';
import type { Logger } from './log';

const LEVELS = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
} as const satisfies Record<TemporalLevel, string>;

/**
 * The Temporal SDK's logger (`Runtime.install({ logger })`) over ours: the worker's own lines, the
 * Rust core's and the workflows' (`log` from @temporalio/workflow) become lines of the process's
 * logger, their metadata as fields (`error` under pino's `err`, so its stack is kept).
 */
export function temporalLogger(log: Logger): TemporalLogger {
  const write = (level: TemporalLevel, message: string, meta: LogMetadata = {}) => {
    const { error, ...fields } = meta as Record<string, unknown>;
    log[LEVELS[level]](error === undefined ? fields : { ...fields, err: error }, message);
  };
  return {
    log: write,
    trace: (message, meta) => write('TRACE', message, meta),
    debug: (message, meta) => write('DEBUG', message, meta),
    info: (message, meta) => write('INFO', message, meta),
    warn: (message, meta) => write('WARN', message, meta),
    error: (message, meta) => write('ERROR', message, meta),
  };
}

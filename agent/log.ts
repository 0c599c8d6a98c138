import type { Log } from '../cli-kit/log';

export type { Log } from '../cli-kit/log';

export const silentLog: Log = () => {};

/** The same log with `fields` added to every line (the simulator names each agent). */
export function withFields(log: Log, fields: Record<string, unknown>): Log {
  return (level, message, more) => log(level, message, { ...fields, ...more });
}

export type LogLevel = 'info' | 'warn' | 'error';

/** Where the agent says what it does: one line per event, never per retry. */
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/** Lines on stderr: `drydock-agent: message`, or one JSON object per line with `json`. */
export function stderrLog(json: boolean): Log {
  return (level, message, fields = {}) => {
    process.stderr.write(
      json
        ? `${JSON.stringify({ at: new Date().toISOString(), level, message, ...fields })}\n`
        : `drydock-agent: ${level === 'info' ? '' : `${level}: `}${message}\n`,
    );
  };
}

export const silentLog: Log = () => {};

/** The same log with `fields` added to every line (the simulator names each agent). */
export function withFields(log: Log, fields: Record<string, unknown>): Log {
  return (level, message, more) => log(level, message, { ...fields, ...more });
}

export type LogLevel = 'info' | 'warn' | 'error';

/** Where a long-running program (the agent, a bridge) says what it does: one line per event, never per retry. */
export type Log = (level: LogLevel, message: string, fields?: Record<string, unknown>) => void;

/** Lines on stderr: `<program>: message`, or one JSON object per line with `json`. */
export function stderrLog(program: string, json: boolean): Log {
  return (level, message, fields = {}) => {
    process.stderr.write(
      json
        ? `${JSON.stringify({ at: new Date().toISOString(), level, message, ...fields })}\n`
        : `${program}: ${level === 'info' ? '' : `${level}: `}${message}\n`,
    );
  };
}

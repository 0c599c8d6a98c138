import { Writable } from 'node:stream';

/** Back to the start of the line and erase it. */
const CLEAR = '\r\x1b[2K';

/**
 * One line at the bottom of a terminal that changes in place (a build's progress), below the log
 * lines written meanwhile: each line written to `destination` erases it, is written, and the line
 * is drawn again under it. It is cut to the terminal's width, as a wrapped line could not be erased.
 */
export function terminalStatusLine(out: NodeJS.WriteStream) {
  let text = '';
  const fitted = () => text.slice(0, Math.max(0, (out.columns || 80) - 1));
  return {
    show(line: string): void {
      text = line;
      out.write(CLEAR + fitted());
    },
    /** Erases the line for good (the work it showed is over). */
    clear(): void {
      if (text) out.write(CLEAR);
      text = '';
    },
    destination: new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        out.write((text ? CLEAR : '') + chunk.toString() + fitted());
        done();
      },
    }),
  };
}

export type StatusLine = ReturnType<typeof terminalStatusLine>;

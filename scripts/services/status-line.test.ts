import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { terminalStatusLine } from './status-line';

const CLEAR = '\r\x1b[2K';

/** A terminal 40 columns wide that keeps what was written to it. */
function terminal() {
  const out = Object.assign(new PassThrough(), { columns: 40 }) as unknown as NodeJS.WriteStream;
  const written: string[] = [];
  out.on('data', (chunk: Buffer) => written.push(chunk.toString()));
  return { out, written };
}

const writeLine = (stream: NodeJS.WritableStream, line: string) =>
  new Promise<void>((resolve) => stream.write(line, () => resolve()));

describe('the status line at the bottom of a terminal', () => {
  it('changes in place, cut to the width so that it never wraps', async () => {
    const { out, written } = terminal();
    const status = terminalStatusLine(out);
    status.show('building the Temporal CLI: 5s');
    status.show(`building the Temporal CLI: 6s, now compiling ${'x'.repeat(60)}`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual([
      `${CLEAR}building the Temporal CLI: 5s`,
      `${CLEAR}building the Temporal CLI: 6s, now comp`, // 39 of 40 columns
    ]);
  });

  it('stays under the log lines written meanwhile, and is gone once cleared', async () => {
    const { out, written } = terminal();
    const status = terminalStatusLine(out);
    await writeLine(status.destination, 'before any status\n');
    status.show('building: 5s');
    await writeLine(status.destination, 'the API listens on :8080\n');
    status.clear();
    await writeLine(status.destination, 'temporal ready\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual([
      'before any status\n',
      `${CLEAR}building: 5s`,
      `${CLEAR}the API listens on :8080\nbuilding: 5s`,
      CLEAR,
      'temporal ready\n',
    ]);
  });
});

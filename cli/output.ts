/** Where a command writes: stdout for results, stderr for notes, errors and progress. */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal, so a progress line can be redrawn in place. */
  stderrIsTTY: boolean;
  /** The terminal's width, to keep the progress line on one row. */
  columns?: number;
}

export const processIo: Io = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  stderrIsTTY: process.stderr.isTTY === true,
  columns: process.stderr.columns,
};

/** Human or JSON output, chosen once by `--json`. */
export class Output {
  private progressShown = false;

  constructor(
    readonly io: Io,
    readonly json: boolean,
  ) {}

  /** The result of a command: `value` as JSON with --json, else the human rendering. */
  result(value: unknown, human: () => string): void {
    this.clearProgress();
    this.io.stdout(this.json ? `${JSON.stringify(value, null, 2)}\n` : ensureNewline(human()));
  }

  /** One JSON document per line, for streams such as `nodes events --follow --json`. */
  line(value: unknown, human: () => string): void {
    this.clearProgress();
    this.io.stdout(this.json ? `${JSON.stringify(value)}\n` : ensureNewline(human()));
  }

  /** A line of human output on stdout; nothing with --json. */
  human(text: string): void {
    if (this.json) return;
    this.clearProgress();
    this.io.stdout(ensureNewline(text));
  }

  /** A remark for the person at the terminal; never on stdout. */
  note(text: string): void {
    this.clearProgress();
    this.io.stderr(ensureNewline(text));
  }

  /** Redraws the progress line; only on a terminal, so logs and pipes stay clean. */
  progress(text: string): void {
    if (!this.io.stderrIsTTY) return;
    const width = this.io.columns || 120;
    this.io.stderr(`\r\x1b[2K${text.length >= width ? `${text.slice(0, width - 2)}…` : text}`);
    this.progressShown = true;
  }

  clearProgress(): void {
    if (!this.progressShown) return;
    this.io.stderr('\r\x1b[2K');
    this.progressShown = false;
  }
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Left-aligned columns separated by two spaces, headers first. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const format = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [format(headers), ...rows.map(format)].join('\n');
}

/** `Key:  value` lines, values aligned. */
export function fields(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(...pairs.map(([k]) => k.length)) + 1;
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(width)}  ${v}`).join('\n');
}

/** A cell for a missing or empty value. */
export const dash = (value: string | null | undefined): string => (value ? value : '-');

/** `12:05Z` from an RFC 3339 time, for progress lines. */
export const clock = (iso: string): string => `${iso.slice(11, 16)}Z`;

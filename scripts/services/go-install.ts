import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createInterface } from 'node:readline';

/** How far a `go install -v` has got, read from the lines it writes. */
export interface GoBuildStatus {
  elapsedMs: number;
  /** Modules fetched from the module proxy so far (`go: downloading …`). */
  downloaded: number;
  /** Packages compiled or being compiled so far (`-v` names each as it starts). */
  compiled: number;
  /** The module being fetched or the package being compiled last; null before the first. */
  current: string | null;
}

/**
 * Follows `go install -v`'s output: `go: downloading <module> <version>` for each module fetched,
 * then the import path of each package as its compilation starts (packages already in Go's build
 * cache are not named). Any other line (a warning, an error) is kept for the failure's message.
 */
export class GoBuildProgress {
  private downloaded = 0;
  private compiled = 0;
  private current: string | null = null;
  private readonly other: string[] = [];

  constructor(private readonly started: number) {}

  line(text: string): void {
    const line = text.trim();
    const download = /^go: downloading (\S+) (\S+)$/.exec(line);
    if (download) {
      this.downloaded++;
      this.current = `${download[1]} ${download[2]}`;
    } else if (/^[\w.~-]+(\/[\w.~+-]+)*$/.test(line)) {
      this.compiled++;
      this.current = line;
    } else if (line) {
      this.other.push(line);
    }
  }

  status(now: number): GoBuildStatus {
    return {
      elapsedMs: now - this.started,
      downloaded: this.downloaded,
      compiled: this.compiled,
      current: this.current,
    };
  }

  /** The lines that were neither a download nor a package: what `go` said went wrong. */
  messages(): string[] {
    return this.other;
  }
}

/** `1m05s`: minutes and seconds, for a person watching a build. */
export function formatElapsed(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return seconds < 60
    ? `${seconds}s`
    : `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** One line of a build's progress: `2m10s: 412 packages compiled, now compiling go.temporal.io/server/…`. */
export function formatGoBuildStatus(what: string, status: GoBuildStatus): string {
  const done = [
    status.downloaded > 0 ? `${status.downloaded} modules downloaded` : '',
    status.compiled > 0 ? `${status.compiled} packages compiled` : '',
  ].filter(Boolean);
  const now =
    status.current === null
      ? 'resolving modules, reading the build cache'
      : `now ${status.compiled > 0 ? 'compiling' : 'downloading'} ${status.current}`;
  return `building ${what}: ${formatElapsed(status.elapsedMs)}${done.length ? `, ${done.join(', ')}` : ''}, ${now}`;
}

/** A progress callback that writes a plain line at most every `everyMs` (logs, pipes, CI). */
export function progressLines(
  what: string,
  log: (line: string) => void,
  everyMs = 30_000,
): (status: GoBuildStatus) => void {
  let next = everyMs;
  return (status) => {
    if (status.elapsedMs < next) return;
    next = status.elapsedMs + everyMs;
    log(formatGoBuildStatus(what, status));
  };
}

export interface GoInstallOptions {
  /** What is built, in words (`the Temporal CLI v1.5.1`). */
  what: string;
  /** Where the binaries go (GOBIN). */
  bin: string;
  /** A line when the build starts and one when it is done. */
  log: (line: string) => void;
  /** Called with the build's progress on each line `go` writes and every second; unset: a line every 30 s. */
  progress?: (status: GoBuildStatus) => void;
  /** Stops the build (`go` gets SIGTERM). */
  signal?: AbortSignal;
}

/**
 * `GOBIN=<bin> go install -v <packages>` (the first build takes minutes; later ones reuse Go's
 * caches), its progress followed; rejects with what `go` said.
 */
export async function goInstall(packages: string[], options: GoInstallOptions): Promise<void> {
  mkdirSync(options.bin, { recursive: true });
  options.log(
    `building ${options.what} from the Go module proxy into ${options.bin}; the first build takes minutes`,
  );
  const started = Date.now();
  const progress = new GoBuildProgress(started);
  const onProgress = options.progress ?? progressLines(options.what, options.log);
  const report = () => onProgress(progress.status(Date.now()));
  const child = spawn('go', ['install', '-v', ...packages], {
    env: { ...process.env, GOBIN: options.bin },
    stdio: ['ignore', 'ignore', 'pipe'],
    signal: options.signal,
  });
  createInterface({ input: child.stderr }).on('line', (line) => {
    progress.line(line);
    report();
  });
  const ticker = setInterval(report, 1_000);
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) {
      throw new Error(`go install ${packages.join(' ')} failed (${code}): ${progress.messages().join('\n')}`);
    }
  } finally {
    clearInterval(ticker);
  }
  options.log(`built ${options.what} in ${formatElapsed(Date.now() - started)}`);
}

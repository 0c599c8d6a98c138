import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** One Drydock program running as its own OS process, as an orchestrator would keep it. */
export interface DrydockProcess {
  name: string;
  /** The current process's pid (a restart changes it). */
  readonly pid: number;
  /** An API's base URL. */
  url?: string;
  kill(signal?: NodeJS.Signals): void;
  /** The current process's end: its exit code, null when a signal ended it. */
  readonly exited: Promise<number | null>;
  /** Starts the program again (after it died or was killed) and waits until it is ready. */
  restart(): Promise<void>;
  /** The last lines the current process wrote (stdout and stderr), to say why it ended. */
  lastOutput(): string;
}

/** How many lines of a process's output `lastOutput` keeps. */
const TAIL_LINES = 5;

/**
 * A program kept as one child process at a time, its output appended to `<home>/logs/<name>.log`.
 * `ready(pid)` resolves once the child of that pid is ready; a child that exits first fails the start.
 */
export class ManagedProcess implements DrydockProcess {
  url?: string;
  private child: ReturnType<typeof spawn> | null = null;
  private ended: Promise<number | null> = Promise.resolve(null);
  private tail: string[] = [];

  constructor(
    readonly name: string,
    private readonly program: string,
    private readonly home: string,
    private readonly env: Record<string, string>,
    private readonly ready: (pid: number) => Promise<void>,
  ) {}

  get pid(): number {
    return this.child?.pid ?? 0;
  }

  get exited(): Promise<number | null> {
    return this.ended;
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    this.child?.kill(signal);
  }

  async restart(): Promise<void> {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) {
      throw new Error(`${this.name} is still running (pid ${this.child.pid})`);
    }
    const logFile = createWriteStream(join(this.home, 'logs', `${this.name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [this.program], {
      env: { ...process.env, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(logFile, { end: false });
    child.stderr.pipe(logFile, { end: false });
    this.tail = [];
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.tail.push(line);
        if (this.tail.length > TAIL_LINES) this.tail.shift();
      });
    }
    this.child = child;
    this.ended = new Promise((done) =>
      // 'close', not 'exit': by then its output is all read, the last lines too.
      child.once('close', (code) => {
        logFile.end();
        done(code);
      }),
    );
    await Promise.race([
      this.ready(child.pid!),
      this.ended.then((code) => {
        throw new Error(
          `${this.name} exited with ${code} while starting (log: ${logFile.path}); it last wrote:\n${this.lastOutput()}`,
        );
      }),
    ]);
  }

  lastOutput(): string {
    return this.tail.join('\n');
  }

  /** SIGTERM (the programs shut down gracefully on it), SIGKILL after 15 s. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await this.ended;
    clearTimeout(timer);
  }
}

/**
 * Waits until GET `url` (a Drydock program's `/readyz`) answers 200 from the process `pid`, read
 * from the answer's `process` field: another program on the same port never counts as this one.
 * Rejects after `timeoutMs`, naming the other process when one answered.
 */
export async function waitForOwnReadyz(url: string, pid: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let stranger: unknown = null;
  for (;;) {
    const answer = await fetch(url).then(
      async (response) => ({ ok: response.ok, body: (await response.json().catch(() => null)) as unknown }),
      () => null,
    );
    const answeredBy = (answer?.body as { process?: unknown } | null)?.process;
    if (answer?.ok && answeredBy === pid) return;
    if (answer?.ok) stranger = answeredBy ?? 'unknown';
    if (Date.now() > deadline) {
      throw new Error(
        stranger === null
          ? `${url} did not answer 200 within ${timeoutMs} ms`
          : `${url} answered for another process (${String(stranger)}), never for pid ${pid}, within ${timeoutMs} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

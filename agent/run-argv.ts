import { spawn } from 'node:child_process';

/** How much of a program's output is kept: the start of stdout, the end of stderr. */
const KEEP_BYTES = 8_192;

/**
 * What a program printed, as a `run` command reports it: the first bytes of stdout and stderr as
 * they came, up to the limit together, in base64 (the API decodes them), and how many bytes past
 * the limit were not kept.
 */
export interface Output {
  stdout: string;
  stderr: string;
  droppedBytes: number;
}

/** How a program run by the agent ended. */
export type ArgvResult =
  | {
      kind: 'exited';
      code: number | null;
      signal: NodeJS.Signals | null;
      stdout: string;
      stderr: string;
      output?: Output;
    }
  | { kind: 'timed-out'; stdout: string; stderr: string; output?: Output }
  | { kind: 'not-started'; message: string }
  /** The agent stopped while it ran (`signal` aborted). */
  | { kind: 'stopped' };

export interface ArgvOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** The agent stops: the program's process group is killed, unless `leaveOnStop`. */
  signal: AbortSignal;
  /** On stop, leave the program running (an action that restarts the machine stops the agent). */
  leaveOnStop?: boolean;
  /** Keep this many bytes of output, stdout and stderr together, as `output`. */
  keepBytes?: number;
}

/** Keeps the first `limit` bytes of two streams together, counting the rest. */
class Capture {
  private readonly chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  private kept = 0;
  private dropped = 0;

  constructor(private readonly limit: number) {}

  add(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const room = Math.max(0, this.limit - this.kept);
    const keep = chunk.subarray(0, room);
    if (keep.length > 0) this.chunks[stream].push(keep);
    this.kept += keep.length;
    this.dropped += chunk.length - keep.length;
  }

  output(): Output {
    const base64 = (chunks: Buffer[]) => Buffer.concat(chunks).toString('base64');
    return {
      stdout: base64(this.chunks.stdout),
      stderr: base64(this.chunks.stderr),
      droppedBytes: this.dropped,
    };
  }
}

/**
 * Runs `argv` as given — no shell — in a process group of its own, with exactly `env`. At its
 * timeout the whole group is killed (SIGKILL), so a script's children go with it.
 */
export function runArgv(argv: readonly string[], options: ArgvOptions): Promise<ArgvResult> {
  const [program, ...args] = argv as [string, ...string[]];
  if (options.signal.aborted) return Promise.resolve({ kind: 'stopped' });
  return new Promise((resolve) => {
    const child = spawn(program, args, {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    const capture = options.keepBytes === undefined ? null : new Capture(options.keepBytes);
    const output = capture ? () => ({ output: capture.output() }) : () => ({});
    let timedOut = false;
    let settled = false;
    const finish = (result: ArgvResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onStop);
      resolve(result);
    };
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onStop = () => {
      if (options.leaveOnStop) {
        // Nothing of it may keep the agent from exiting: the process, nor the pipes it writes to.
        child.unref();
        child.stdout!.destroy();
        child.stderr!.destroy();
      } else {
        killGroup();
      }
      finish({ kind: 'stopped' });
    };
    options.signal.addEventListener('abort', onStop, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => {
      capture?.add('stdout', chunk);
      if (stdout.length < KEEP_BYTES) stdout += chunk.toString('utf8');
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      capture?.add('stderr', chunk);
      stderr = (stderr + chunk.toString('utf8')).slice(-KEEP_BYTES);
    });
    child.once('error', (error) => finish({ kind: 'not-started', message: error.message }));
    child.once('close', (code, signal) => {
      finish(
        timedOut
          ? { kind: 'timed-out', stdout, stderr, ...output() }
          : { kind: 'exited', code, signal, stdout, stderr, ...output() },
      );
    });
  });
}

/** What a probe or an action is run for: the node, the condition, and for an action its command. */
export interface ScriptFor {
  nodeId: string;
  /** The condition a probe or a remediation rung is for; none for a `run` command. */
  condition?: string;
  commandId?: string;
  action?: string;
}

/**
 * The whole environment of a probe or an action (docs/agent/gpu-machine.md): PATH and HOME of the
 * agent, and the DRYDOCK_ variables saying what it is run for — nothing else of the agent's.
 */
export function scriptEnv(what: ScriptFor): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME']) if (process.env[name] !== undefined) env[name] = process.env[name];
  env.DRYDOCK_NODE_ID = what.nodeId;
  if (what.commandId !== undefined) env.DRYDOCK_COMMAND_ID = what.commandId;
  if (what.action !== undefined) env.DRYDOCK_ACTION = what.action;
  if (what.condition !== undefined) env.DRYDOCK_CONDITION = what.condition;
  return env;
}

import { randomUUID } from 'node:crypto';
import { ApiError } from '@drydock/client';
import { HEARTBEAT_EVERY_MS } from '../domain/liveness';
import { Backoff, sleep } from './backoff';
import { CaTrust } from './ca-trust';
import type { AgentClient } from './client';
import type { DiscoveryConfig, ProbeConfig } from './config';
import { Discovery } from './discovery';
import { CommandOutcomes } from './command-outcomes';
import { CommandHandlers, type AgentCommand } from './commands';
import type { Identity } from './identity';
import { MemoryJournal, type Journal } from './journal';
import { silentLog, type Log } from './log';
import { Probes } from './probes';
import { Reach } from './reach';
import { renewCredential, type Renewal } from './renewal';
import { MemoryOutputStore, RunCommands, type ActionRunner, type OutputStore } from './run-commands';

/** The machine's boot as the agent says it: the kernel's boot id, and when it booted. */
export interface Boot {
  bootId: string;
  bootedAt: string;
}

/** A session without a runner: every `run` command is refused, saying so. */
const NO_ACTIONS: ActionRunner = {
  describe: () => [],
  prepare: () => ({ refuse: 'this agent runs no actions (none configured: see --config)' }),
};

/** The long-poll wait the agent asks for (docs/lifecycle/enrollment.md: `?wait=30`). */
export const POLL_WAIT_SECONDS = 30;
/** When a poll brings back only commands a handler chose to ignore, look again after this long. */
const IGNORED_RECHECK_MS = 5_000;

export interface SessionOptions {
  /** A client holding the node credential. */
  client: AgentClient;
  identity: Pick<Identity, 'nodeId' | 'clusterId' | 'caPublicKey'>;
  /**
   * Stores a CA key the node follows a rotation to (identity.json); throws when it cannot, and the
   * node keeps trusting the key it has. Absent: the new key is kept in memory only.
   */
  persistCaKey?: (caPublicKey: string) => void;
  dataDir?: string;
  heartbeatEveryMs?: number;
  /** Whether to long-poll the command stream (a heartbeat-only simulator turns it off). */
  commands?: boolean;
  pollWaitSeconds?: number;
  handlers?: CommandHandlers;
  /** The actions `run` commands name (docs/lifecycle/commands.md); none: every one is refused. */
  runner?: ActionRunner;
  /** Where a finished `run` command's output waits until the API has it (default: memory). */
  outputs?: OutputStore;
  /**
   * The machine's boot, said at each session start with the runner's actions (`PUT
   * /v1/agent/facts`), before the first heartbeat. Absent: nothing is said.
   */
  boot?: () => Boot;
  /** Renews the node credential two thirds into its life; absent: it is never renewed. */
  renewal?: Renewal;
  /** Health probes run for the session's length (docs/agent/gpu-machine.md). */
  probes?: Record<string, ProbeConfig>;
  /** The inventory discovery command, run at each start and periodically (agent/discovery.ts). */
  discovery?: DiscoveryConfig;
  journal?: Journal;
  log?: Log;
  backoff?: { baseMs?: number; capMs?: number };
}

/**
 * Why a session ended: stopped by its owner; its identity is no longer accepted (401); or it acked a
 * `final` command (a purge) and ran its after-ack step (`error`: how that step failed).
 */
export type SessionEnd =
  | { reason: 'stopped' }
  | { reason: 'revoked'; message: string }
  | { reason: 'final'; commandId: string; kind: string; error?: string };

interface Running {
  /** Ends sleeps, long-polls and acks; an in-flight heartbeat completes (see `stop`). */
  soft: AbortController;
  /** Also ends an in-flight heartbeat (`pause`: the node falls silent at once). */
  hard: AbortController;
  loops: Promise<void>;
}

/**
 * One node's session with the control plane: heartbeats every `heartbeatEveryMs`, and the command
 * stream long-polled in a loop. Network failures and 5xx are retried with capped, jittered
 * backoff; a block (403) is retried the same way so an unblock is noticed within seconds; a
 * revoked or unknown identity (401) ends the session, as no retry can fix it. The real agent and
 * every simulated agent run this same code.
 */
export class AgentSession {
  /** Heartbeats the API accepted, and when the last one was accepted. */
  heartbeats = 0;
  lastHeartbeatAt: Date | null = null;
  /** Renewals of the credential that went through. */
  renewals = 0;
  /**
   * This run's id, sent with each heartbeat: a new one at each start of the agent, so the API tells
   * a restart (a new run) from two machines with one identity (two runs alternating).
   */
  readonly sessionId = randomUUID();
  readonly ended: Promise<SessionEnd>;

  private running: Running | null = null;
  private end: SessionEnd | null = null;
  private resolveEnded!: (end: SessionEnd) => void;
  private readonly reach: Reach;
  private paused = false;
  private readonly ca: CaTrust;
  /** A final ack being reported: a heartbeat refused as revoked now may mean the API took it. */
  private finalAck: string | null = null;
  private readonly outcomes: CommandOutcomes;
  private readonly runs: RunCommands;
  /** The session's facts are still to be said (at each start). */
  private factsDue = false;
  private readonly probes: Probes | null;
  private readonly discovery: Discovery | null;
  private readonly log: Log;
  private renewalFailing = false;

  constructor(private readonly options: SessionOptions) {
    this.log = options.log ?? silentLog;
    const handlers = options.handlers ?? new CommandHandlers();
    const journal = options.journal ?? new MemoryJournal();
    this.outcomes = new CommandOutcomes(handlers, journal, this.log);
    this.runs = new RunCommands(
      options.runner ?? NO_ACTIONS,
      journal,
      options.outputs ?? new MemoryOutputStore(),
      this.log,
    );
    this.ca = new CaTrust(options.identity, options.persistCaKey, this.log);
    this.reach = new Reach(options.client.api, options.identity.nodeId, this.log);
    const probes = options.probes ?? {};
    this.probes =
      Object.keys(probes).length === 0
        ? null
        : new Probes({ probes, client: options.client, nodeId: options.identity.nodeId, log: this.log });
    this.discovery = options.discovery
      ? new Discovery({
          config: options.discovery,
          client: options.client,
          nodeId: options.identity.nodeId,
          log: this.log,
        })
      : null;
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
  }

  get state(): 'idle' | 'running' | 'paused' | SessionEnd['reason'] {
    if (this.end) return this.end.reason;
    if (this.running) return 'running';
    return this.paused ? 'paused' : 'idle';
  }

  /** Starts (or resumes) heartbeating and polling; does nothing once the session ended. */
  start(): void {
    if (this.end || this.running) return;
    const soft = new AbortController();
    const hard = new AbortController();
    hard.signal.addEventListener('abort', () => soft.abort(), { once: true });
    this.factsDue = this.options.boot !== undefined;
    const loops = [this.heartbeatLoop(soft.signal, hard.signal)];
    if (this.options.commands !== false) loops.push(this.commandLoop(soft.signal));
    if (this.probes) loops.push(this.probes.run(soft.signal));
    if (this.discovery) loops.push(this.discovery.run(soft.signal));
    this.running = { soft, hard, loops: Promise.all(loops).then(() => undefined) };
  }

  /** Falls silent at once, without a goodbye (a simulated network cut); `start` resumes. */
  async pause(): Promise<void> {
    const running = this.running;
    this.running = null;
    if (!running) return;
    this.paused = true;
    running.hard.abort();
    await running.loops;
  }

  /**
   * Stops for good. A heartbeat already sent is let finish, so that no late heartbeat can land
   * after a goodbye and connect the node again.
   */
  async stop(): Promise<void> {
    const running = this.running;
    this.running = null;
    if (running) {
      running.soft.abort();
      await running.loops;
    }
    this.finish({ reason: 'stopped' });
  }

  /** Stops, then says goodbye: a final heartbeat with `state: offline`. */
  async goodbye(): Promise<void> {
    await this.stop();
    await this.options.client.heartbeat('offline', this.sessionId);
  }

  private finish(end: SessionEnd): void {
    if (this.end) return;
    this.end = end;
    this.resolveEnded(end);
  }

  private async heartbeatLoop(soft: AbortSignal, hard: AbortSignal): Promise<void> {
    const every = this.options.heartbeatEveryMs ?? HEARTBEAT_EVERY_MS;
    const backoff = new Backoff(this.options.backoff);
    while (!soft.aborted) {
      const started = Date.now();
      let wait: number;
      try {
        if (this.factsDue) {
          const boot = this.options.boot!();
          await this.options.client.reportFacts({ ...boot, actions: this.runs.actions() }, hard);
          this.factsDue = false;
        }
        const { ca, renewAfter } = await this.options.client.heartbeat('running', this.sessionId, hard);
        this.ca.follow(ca);
        this.heartbeats++;
        this.lastHeartbeatAt = new Date();
        this.reached();
        backoff.reset();
        if (renewAfter && renewAfter.getTime() <= Date.now()) await this.renew(hard);
        wait = every - (Date.now() - started);
      } catch (error) {
        if (hard.aborted) return;
        // The API may have forgotten the node on its final ack: the ack's answer decides, not this.
        if (this.finalAck !== null && error instanceof ApiError && error.status === 401) return;
        if (this.failed(error)) return;
        wait = backoff.next();
      }
      await sleep(Math.max(0, wait), soft);
    }
  }

  /**
   * Renews the credential; a failure is said once and tried again at the next heartbeat, the old
   * credential working meanwhile (until it expires: then every call answers CREDENTIAL_EXPIRED).
   */
  private async renew(signal: AbortSignal): Promise<void> {
    const renewal = this.options.renewal;
    if (!renewal) return;
    try {
      const expiresAt = await renewCredential(this.options.client, this.options.identity, renewal, signal);
      this.renewals++;
      this.renewalFailing = false;
      this.log('info', `node credential renewed; the new one expires at ${expiresAt}`);
    } catch (error) {
      if (signal.aborted || this.renewalFailing) return;
      this.renewalFailing = true;
      this.log(
        'warn',
        `node credential renewal failed (${(error as Error).message}); trying again at the next heartbeat`,
      );
    }
  }

  private async commandLoop(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.options.backoff);
    const wait = this.options.pollWaitSeconds ?? POLL_WAIT_SECONDS;
    while (!signal.aborted) {
      if (this.outcomes.returnsDue) {
        try {
          await this.outcomes.reportReturns(this.options.client, signal);
        } catch (error) {
          // Not in the way of the poll (a blocked node still polls for its purge); tried again next time.
          if (signal.aborted || this.failed(error)) return;
        }
      }
      try {
        const { items, ca } = await this.options.client.commands(wait, signal);
        // Before any command: a purge signed with a rotated-to key is checked against that key.
        this.ca.follow(ca);
        this.reached();
        backoff.reset();
        let answered = 0;
        for (const command of items) {
          if (signal.aborted) return;
          if (await this.dispatch(command, signal)) answered++;
        }
        // Only ignored commands came back: the poll would answer again at once.
        if (items.length > 0 && answered === 0) await sleep(IGNORED_RECHECK_MS, signal);
      } catch (error) {
        if (signal.aborted || this.failed(error)) return;
        await sleep(backoff.next(), signal);
      }
    }
  }

  /** Handles one command and reports its outcome; true once the API has it. */
  private async dispatch(command: AgentCommand, signal: AbortSignal): Promise<boolean> {
    const context = {
      nodeId: this.options.identity.nodeId,
      clusterId: this.options.identity.clusterId,
      caPublicKey: this.ca.publicKey,
      dataDir: this.options.dataDir,
      log: this.log,
      signal,
    };
    if (command.kind === 'run') return this.runs.handle(command, this.options.client, context);
    const entry = await this.outcomes.decide(command, context);
    if (!entry) return false;
    // An ack whose report failed before comes back from the journal: its step is still due.
    const next = this.outcomes.afterAck(command.id);
    if (next?.final) this.finalAck = command.id;
    let reported: boolean;
    try {
      reported = await this.outcomes.report(this.options.client, entry, signal);
    } finally {
      this.finalAck = null;
    }
    if (!reported || !next) return true;
    // The node's last word is in: nothing goes out again (a heartbeat would only be refused).
    if (next.final) this.running?.hard.abort();
    let error: string | undefined;
    if (next.after) {
      await next.after().catch((failure: unknown) => {
        error = (failure as Error).message;
        this.log('error', `command ${command.id} (${command.kind}): ${error}`, { commandId: command.id });
      });
    }
    if (next.final) {
      this.finish({
        reason: 'final',
        commandId: command.id,
        kind: command.kind,
        ...(error ? { error } : {}),
      });
    }
    return true;
  }

  /** A call got through: after failures, the probes say every condition again. */
  private reached(): void {
    if (this.reach.reached()) this.probes?.reconnected();
  }

  /** Classifies a failed call; true when the session has ended (the identity is not accepted). */
  private failed(error: unknown): boolean {
    if (this.reach.failed(error) === 'retry') return false;
    this.running?.hard.abort();
    this.running = null;
    this.finish({ reason: 'revoked', message: (error as ApiError).message });
    return true;
  }
}

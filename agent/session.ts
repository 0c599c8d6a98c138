import { HEARTBEAT_EVERY_MS } from '../domain/liveness';
import { caFingerprint, followCaOffer } from '../domain/signing';
import { Backoff, sleep } from './backoff';
import { ApiRefusal, Unreachable, type AgentClient, type OfferedCa } from './client';
import { CommandHandlers, type AgentCommand, type CommandContext, type CommandOutcome } from './commands';
import type { Identity } from './identity';
import { MemoryJournal, type Journal, type JournalEntry } from './journal';
import { silentLog, type Log } from './log';

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

/** What is left to do once the API has an ack. */
type AfterAck = Pick<Extract<CommandOutcome, { outcome: 'ack' }>, 'after' | 'final'>;

/** How the control plane last answered: accepted, refused as blocked, or not at all. */
type Reach = 'unknown' | 'ok' | 'blocked' | 'unreachable' | 'failing';

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
  readonly ended: Promise<SessionEnd>;

  private running: Running | null = null;
  private end: SessionEnd | null = null;
  private resolveEnded!: (end: SessionEnd) => void;
  private reach: Reach = 'unknown';
  private paused = false;
  private readonly ignored = new Set<string>();
  /** The cluster CA key signed commands are checked against: the join's, or one rotated to since. */
  private caPublicKey: string;
  /** The last CA offer refused, so that a refusal is logged once, not on every heartbeat. */
  private refusedOffer: string | null = null;
  /** Acks whose after-ack step waits for the API to take them (kept across a failed report). */
  private readonly afterAcks = new Map<string, AfterAck>();
  /** A final ack being reported: a heartbeat refused as revoked now may mean the API took it. */
  private finalAck: string | null = null;
  private readonly handlers: CommandHandlers;
  private readonly journal: Journal;
  private readonly log: Log;

  constructor(private readonly options: SessionOptions) {
    this.handlers = options.handlers ?? new CommandHandlers();
    this.journal = options.journal ?? new MemoryJournal();
    this.log = options.log ?? silentLog;
    this.caPublicKey = options.identity.caPublicKey;
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
    const loops = [this.heartbeatLoop(soft.signal, hard.signal)];
    if (this.options.commands !== false) loops.push(this.commandLoop(soft.signal));
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
    await this.options.client.heartbeat('offline');
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
        const ca = await this.options.client.heartbeat('running', hard);
        this.followCa(ca);
        this.heartbeats++;
        this.lastHeartbeatAt = new Date();
        this.reached();
        backoff.reset();
        wait = every - (Date.now() - started);
      } catch (error) {
        if (hard.aborted) return;
        // The API may have forgotten the node on its final ack: the ack's answer decides, not this.
        if (this.finalAck !== null && error instanceof ApiRefusal && error.status === 401) return;
        if (this.failed(error)) return;
        wait = backoff.next();
      }
      await sleep(Math.max(0, wait), soft);
    }
  }

  private async commandLoop(signal: AbortSignal): Promise<void> {
    const backoff = new Backoff(this.options.backoff);
    const wait = this.options.pollWaitSeconds ?? POLL_WAIT_SECONDS;
    while (!signal.aborted) {
      try {
        const { items, ca } = await this.options.client.commands(wait, signal);
        // Before any command: a purge signed with a rotated-to key is checked against that key.
        this.followCa(ca);
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

  /**
   * Handles one command and reports its outcome; true once the API has it. A command already in
   * the journal is not carried out again: its recorded outcome is reported again.
   */
  private async dispatch(command: AgentCommand, signal: AbortSignal): Promise<boolean> {
    let entry = this.journal.find(command.id);
    if (!entry) {
      if (this.ignored.has(command.id)) return false;
      const context: CommandContext = {
        nodeId: this.options.identity.nodeId,
        clusterId: this.options.identity.clusterId,
        caPublicKey: this.caPublicKey,
        dataDir: this.options.dataDir,
        log: this.log,
        signal,
      };
      const decided = await this.handlers.handle(command, context);
      if (decided.outcome === 'ignore') {
        this.ignored.add(command.id);
        this.log('info', `command ${command.id} (${command.kind}) ignored`, { commandId: command.id });
        return false;
      }
      entry = {
        id: command.id,
        kind: command.kind,
        outcome: decided.outcome === 'ack' ? 'acked' : 'refused',
        ...(decided.outcome === 'refuse' ? { reason: decided.reason } : {}),
        at: new Date().toISOString(),
      };
      // Recorded even when the agent is stopping: what the handler did is done.
      this.journal.append(entry);
      if (decided.outcome === 'ack' && (decided.after || decided.final)) {
        this.afterAcks.set(command.id, { after: decided.after, final: decided.final });
      }
    }
    // An ack whose report failed before comes back from the journal: its step is still due.
    const next = this.afterAcks.get(command.id);
    if (next?.final) this.finalAck = command.id;
    let reported: boolean;
    try {
      reported = await this.report(entry, signal);
    } finally {
      this.finalAck = null;
    }
    if (next) this.afterAcks.delete(command.id);
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

  /** Sends the outcome; true when the API took it, false when the command was already final. */
  private async report(entry: JournalEntry, signal: AbortSignal): Promise<boolean> {
    const { client } = this.options;
    try {
      if (entry.outcome === 'acked') await client.ack(entry.id, signal);
      else await client.refuse(entry.id, entry.reason ?? 'refused', signal);
    } catch (error) {
      // Cancelled, answered before, or gone: the command is final elsewhere; nothing to retry.
      if (error instanceof ApiRefusal && [400, 404, 409].includes(error.status)) {
        this.log('warn', `command ${entry.id} (${entry.kind}): ${error.message}`, { commandId: entry.id });
        return false;
      }
      throw error;
    }
    this.log(
      'info',
      `command ${entry.id} (${entry.kind}) ${entry.outcome}${entry.reason ? `: ${entry.reason}` : ''}`,
      { commandId: entry.id, kind: entry.kind, outcome: entry.outcome },
    );
    return true;
  }

  /**
   * Follows a CA rotation the API offers, when the key this node trusts endorses the new one
   * (domain/signing.ts): stored first, then used. Anything else is refused and the node keeps its
   * key: an API answer alone — without a signature by a CA key the node trusts — moves nothing.
   */
  private followCa(offer: OfferedCa): void {
    if (offer === undefined) return;
    const verdict = offer
      ? followCaOffer(this.caPublicKey, offer, this.options.identity.clusterId)
      : ({ ok: false, reason: 'a malformed CA offer' } as const);
    if (verdict.ok && !verdict.changed) return;
    if (!verdict.ok) {
      const key = offer?.publicKey ?? 'malformed';
      if (this.refusedOffer === key) return;
      this.refusedOffer = key;
      this.log(
        'warn',
        `CA key not followed: ${verdict.reason}; still trusting ${caFingerprint(this.caPublicKey)}`,
      );
      return;
    }
    try {
      this.options.persistCaKey?.(verdict.publicKey);
    } catch (error) {
      this.log(
        'error',
        `CA key rotation not stored (${(error as Error).message}); retrying on the next answer`,
      );
      return;
    }
    this.caPublicKey = verdict.publicKey;
    this.refusedOffer = null;
    this.log('info', `the cluster CA key rotated: trusting ${caFingerprint(verdict.publicKey)} from now on`);
  }

  /** A call succeeded: says so once after a failure, or on the first contact. */
  private reached(): void {
    const was = this.reach;
    this.reach = 'ok';
    if (was === 'ok') return;
    const api = this.options.client.api;
    if (was === 'unknown') this.log('info', `connected to ${api} as ${this.options.identity.nodeId}`);
    else if (was === 'blocked') this.log('info', 'unblocked: the control plane accepts this node again');
    else this.log('info', `reconnected to ${api}`);
  }

  /** Classifies a failed call; true when the session has ended (the identity is not accepted). */
  private failed(error: unknown): boolean {
    if (error instanceof ApiRefusal && error.status === 401) {
      this.running?.hard.abort();
      this.running = null;
      this.finish({ reason: 'revoked', message: error.message });
      return true;
    }
    if (error instanceof ApiRefusal && error.status === 403) {
      this.changeReach('blocked', `blocked by the control plane; retrying (${error.message})`);
    } else if (error instanceof Unreachable) {
      this.changeReach('unreachable', `${error.message}; retrying`);
    } else if (error instanceof ApiRefusal) {
      this.changeReach(
        'failing',
        `the control plane answered ${error.status} ${error.code}: ${error.message}; retrying`,
      );
    } else {
      this.log('error', `unexpected failure: ${(error as Error)?.stack ?? String(error)}; retrying`);
    }
    return false;
  }

  /** Logs a failure when it is news: once per outage or block, not once per retry. */
  private changeReach(reach: Reach, message: string): void {
    if (this.reach === reach) return;
    this.reach = reach;
    this.log('warn', message);
  }
}

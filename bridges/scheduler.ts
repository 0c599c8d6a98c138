import type { EndingAction } from '../domain/observed';
import type { EndAsking, SchedulerNodeState, SchedulerWork } from '../domain/scheduler';

/**
 * What every scheduler adapter does (Slurm, Kubernetes): read its nodes and the work on them,
 * follow that work, cordon and uncordon a node, say how it ends work (EndAsking) and end it.
 * Thin: the rules are in domain/scheduler.ts, the reconciling in bridges/reconcile.ts. A read that
 * the scheduler could not answer in full throws: an empty answer means nothing runs, and work is
 * released on it.
 */
export interface Scheduler extends EndAsking {
  /** `<scheduler>:<cluster>`: the allocations' source, e.g. `slurm:hpc1`. */
  readonly source: string;
  listNodes(): Promise<SchedulerNodeState[]>;
  /** The work running now, on every node, each node's share of it as one entry. */
  listWork(): Promise<SchedulerWork[]>;
  /** Follows the work as it starts and ends (see WorkWatch); the returned function stops it. */
  watchWork(watch: WorkWatch): () => void;
  /** No new work on the node, saying why; a cordon already there is replaced. */
  cordon(node: string, reason: string): Promise<void>;
  uncordon(node: string): Promise<void>;
  /** Asks the scheduler to end the work; resolves to what it answered, throws when it refused. */
  endWork(work: SchedulerWork, action: EndingAction): Promise<string>;
}

/** What an adapter tells the bridge as the scheduler's work changes. */
export interface WorkWatch {
  /** Work started or ended somewhere: the bridge runs a pass soon. */
  changed(): void;
  /**
   * This work (SchedulerWork ids) is gone, as the scheduler itself says, not as a hint says: the
   * bridge releases it at once, without waiting for a pass.
   */
  ended(ids: string[]): void;
  /** The adapter can no longer follow the work: the bridge runs on the feed and its sweep alone. */
  failed(error: Error): void;
}

import { ApiError, Unreachable, type Schemas } from '@drydock/client';
import { mapLimited } from '../cli-kit/map-limited';
import { ASKING, REFUSED } from '../domain/observed';
import {
  nodeReport,
  nodeStep,
  tenantFor,
  workPlan,
  type NodeStep,
  type PlacedWork,
} from '../domain/scheduler';
import { sameReport, type SchedulerReport } from '../domain/scheduler-view';
import type { DrydockSide } from './drydock';
import type { Scheduler } from './scheduler';

/** What a bridge is told about its cluster beyond the scheduler's own answers. */
export interface BridgeRules {
  /** Scheduler node name → Drydock hostname, for the names that differ. */
  hostnames: Record<string, string>;
  /** Scheduler owner (Slurm account) → Drydock tenant. */
  tenants: Record<string, string>;
  /** The tenant of work whose owner is not in `tenants`; absent: the node's own tenant. */
  defaultTenant: string | null;
}

/** The ends a pass is asking and recording, by the work's id: settled once the answer is recorded. */
export type Answering = Map<string, Promise<void>>;

/** What one pass did, for the log and the tests. */
export interface PassSummary {
  observed: number;
  released: number;
  ended: number;
  /** Of `ended`, the polite asks the scheduler refused (asked again soon: REFUSED_AGAIN_AFTER_MS). */
  refused: number;
  cordoned: string[];
  uncordoned: string[];
  reported: number;
  /** Scheduler nodes with no Drydock node of their hostname: reported, never created. */
  unmatched: string[];
  /** Why some work or node could not be brought in line this pass (it is tried again next pass). */
  problems: string[];
}

/** A report older than this is sent again even when nothing changed: the view says when it was seen. */
const REFRESH_REPORT_MS = 60_000;
/** How many asks of the scheduler (cordon, uncordon, end work) one pass has in flight at once. */
const ASKS_AT_ONCE = 32;
/** How many writes to Drydock one pass has in flight at once. */
export const WRITES_AT_ONCE = 8;

/**
 * One pass, from scratch (the bridge keeps no state between passes): reads the scheduler and
 * Drydock, then makes each agree where it is the other's to decide — the scheduler's cordon
 * follows Drydock's, Drydock's record of the work follows the scheduler's, and work a drain's
 * deadline let go is ended in the scheduler. A pass that changed the scheduler's nodes asks for
 * another (`cordoned`/`uncordoned`), which reports what the scheduler then says.
 */
export async function reconcile(
  scheduler: Scheduler,
  drydock: DrydockSide,
  rules: BridgeRules,
  answering: Answering,
): Promise<PassSummary> {
  // Drydock first, then the scheduler: work released (by the bridge's quick path) before Drydock
  // was read had ended before the scheduler is read, so this pass cannot record it again.
  const [nodes, recorded, drains] = await Promise.all([
    drydock.nodes(),
    drydock.allocations(),
    drydock.drains(),
  ]);
  const [schedulerNodes, running] = await Promise.all([scheduler.listNodes(), scheduler.listWork()]);
  const summary: PassSummary = {
    observed: 0,
    released: 0,
    ended: 0,
    refused: 0,
    cordoned: [],
    uncordoned: [],
    reported: 0,
    unmatched: [],
    problems: [],
  };
  const byHostname = new Map(nodes.map((n) => [n.hostname, n]));
  const matched = new Map<string, Schemas['Node']>();
  // Sent after the work: a release is what a drain waits for, a report is only what it shows.
  const reports: { nodeId: string; name: string; report: SchedulerReport }[] = [];
  const steps: { name: string; step: NonNullable<NodeStep> }[] = [];
  for (const s of schedulerNodes) {
    const node = byHostname.get(rules.hostnames[s.name] ?? s.hostname ?? s.name);
    if (!node) {
      summary.unmatched.push(s.name);
      continue;
    }
    matched.set(s.name, node);
    const drain = drains.get(node.id);
    const step = nodeStep(node.cordoned, s, drain ? { id: drain.id, reason: drain.reason } : null);
    if (step) {
      steps.push({ name: s.name, step });
    } else {
      const known = node.schedulers.find((v) => v.source === scheduler.source) ?? null;
      const report = nodeReport(node.cordoned, s, scheduler.source, known, Date.now());
      if (!reportedLately(node, scheduler.source, report))
        reports.push({ nodeId: node.id, name: s.name, report });
    }
  }
  await mapLimited(steps, ASKS_AT_ONCE, async ({ name, step }) => {
    await attempt(summary, `${name}: ${step.kind}`, async () => {
      if (step.kind === 'cordon') {
        await scheduler.cordon(name, step.reason);
        summary.cordoned.push(name);
      } else {
        await scheduler.uncordon(name);
        summary.uncordoned.push(name);
      }
    });
  });
  summary.cordoned.sort();
  summary.uncordoned.sort();

  const placed: PlacedWork[] = [];
  for (const work of running) {
    const node = matched.get(work.node);
    if (!node) continue;
    const tenantId = tenantFor(work, rules.tenants, rules.defaultTenant, node.tenantId);
    if (tenantId === null) {
      summary.problems.push(
        `${work.id} on ${work.node}: owner ${work.owner ?? '(none)'} maps to no tenant and the node has none: add it to the tenant map`,
      );
      continue;
    }
    placed.push({ work, nodeId: node.id, tenantId });
  }
  const draining = new Set(drains.keys());
  const plan = workPlan(placed, recorded, draining, scheduler, Date.now());
  // Released first: work the scheduler moved to another node is recorded there after.
  await mapLimited(plan.release, WRITES_AT_ONCE, async (allocation) => {
    await attempt(summary, `release ${allocation.externalId}`, async () => {
      await drydock.release(allocation.id);
      summary.released++;
    });
  });
  await mapLimited(plan.observe, WRITES_AT_ONCE, async (p) => {
    await attempt(summary, `record ${p.work.id}`, async () => {
      await drydock.observe({
        nodeId: p.nodeId,
        tenantId: p.tenantId,
        externalId: p.work.id,
        endsAt: p.work.endsAt,
      });
      summary.observed++;
    });
  });
  // Each is recorded as asked (ASKING, the first time: a bridge stopped mid-ask leaves a record),
  // asked, then its answer recorded; ASKS_AT_ONCE at a time (kubectl drain evicts a node's pods
  // together). Work ended by the ask is released by the watch only after its answer is in
  // (`answering`): recorded after the release, the answer would be refused and lost.
  await mapLimited(plan.end, ASKS_AT_ONCE, async ({ allocation, work, action, forced }) => {
    const answered = (async () => {
      const first = allocation.ending?.action !== action;
      // Drydock refused the record (the drain ended, say): not asked either.
      if (
        first &&
        !(await attempt(summary, `end ${work.id}`, () => drydock.ending(allocation.id, action, ASKING)))
      )
        return;
      summary.ended++;
      let answer: string;
      try {
        answer = await scheduler.endWork(work, action);
      } catch (error) {
        if (!forced) summary.refused++;
        answer = `${REFUSED}${(error as Error).message}`;
      }
      await attempt(summary, `end ${work.id}`, () => drydock.ending(allocation.id, action, answer));
    })();
    answering.set(work.id, answered);
    try {
      await answered;
    } finally {
      answering.delete(work.id);
    }
  });
  await mapLimited(reports, WRITES_AT_ONCE, async ({ nodeId, name, report }) => {
    await attempt(summary, `${name}: report`, async () => {
      await drydock.report(nodeId, report);
      summary.reported++;
    });
  });
  return summary;
}

/** The node's report as Drydock has it is this one, and recent. */
function reportedLately(node: Schemas['Node'], source: string, report: SchedulerReport): boolean {
  const known = node.schedulers.find((s) => s.source === source);
  if (!known || Date.now() - Date.parse(known.observedAt) > REFRESH_REPORT_MS) return false;
  return sameReport(known, report);
}

/**
 * Runs one step of a pass, resolving to whether it went through; a refusal is noted and the pass
 * goes on (the next pass tries again). No answer from Drydock ends the pass: nothing else would get
 * through either.
 */
async function attempt(summary: PassSummary, what: string, step: () => Promise<unknown>): Promise<boolean> {
  try {
    await step();
    return true;
  } catch (error) {
    if (error instanceof Unreachable) throw error;
    if (error instanceof ApiError) summary.problems.push(`${what}: ${error.code}: ${error.message}`);
    else summary.problems.push(`${what}: ${(error as Error).message}`);
    return false;
  }
}

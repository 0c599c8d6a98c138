import { describe, expect, it } from 'vitest';
import { REFUSED, type EndingAction } from './observed';
import {
  drydockReason,
  END_AGAIN_AFTER_MS,
  endActionFor,
  isDrydockReason,
  REFUSED_AGAIN_AFTER_MS,
  nodeReport,
  nodeStep,
  UNRESPONSIVE_GRACE_MS,
  tenantFor,
  workPlan,
  type EndAsking,
  type ObservedAllocation,
  type SchedulerNodeState,
  type SchedulerWork,
} from './scheduler';

const slurmNode = (over: Partial<SchedulerNodeState> = {}): SchedulerNodeState => ({
  name: 'n1',
  state: 'idle',
  cordoned: false,
  reason: null,
  down: false,
  unresponsive: false,
  ...over,
});
const work = (over: Partial<SchedulerWork> = {}): SchedulerWork => ({
  id: '4711',
  node: 'n1',
  owner: null,
  queue: 'batch',
  endsAt: null,
  restartable: true,
  ...over,
});
const recorded = (over: Partial<ObservedAllocation> = {}): ObservedAllocation => ({
  id: 'alloc_1',
  nodeId: 'node_1',
  externalId: '4711',
  endRequestedAt: null,
  ending: null,
  ...over,
});

describe('the reason Drydock gives the scheduler', () => {
  it("names the drain's reason and operation, or says cordoned; only those are Drydock's", () => {
    expect(drydockReason({ id: 'op_1', reason: 'driver roll-out' })).toBe('drydock: driver roll-out (op_1)');
    expect(drydockReason({ id: 'op_1', reason: null })).toBe('drydock: drain (op_1)');
    expect(drydockReason(null)).toBe('drydock: cordoned');
    expect(isDrydockReason('drydock: cordoned')).toBe(true);
    expect(isDrydockReason('bad fan')).toBe(false);
    expect(isDrydockReason(null)).toBe(false);
  });
});

describe('nodeStep', () => {
  const drain = { id: 'op_1', reason: 'x' };
  const ours = 'drydock: x (op_1)';
  it("cordons a node Drydock cordoned, with its open drain's reason", () => {
    expect(nodeStep(true, slurmNode(), drain)).toEqual({ kind: 'cordon', reason: ours });
    expect(nodeStep(true, slurmNode(), null)).toEqual({ kind: 'cordon', reason: 'drydock: cordoned' });
    expect(nodeStep(true, slurmNode({ cordoned: true, reason: 'drydock: cordoned' }), drain)).toEqual({
      kind: 'cordon',
      reason: ours,
    });
    expect(nodeStep(true, slurmNode({ cordoned: true, reason: ours }), drain)).toBeNull();
  });

  it("keeps a drain's reason once the drain ended and the node stays cordoned", () => {
    expect(nodeStep(true, slurmNode({ cordoned: true, reason: ours }), null)).toBeNull();
  });

  it("lifts only Drydock's own cordon, never an administrator's", () => {
    expect(nodeStep(false, slurmNode({ cordoned: true, reason: ours }), null)).toEqual({ kind: 'uncordon' });
    expect(nodeStep(false, slurmNode({ cordoned: true, reason: 'bad fan' }), null)).toBeNull();
    // Cordoned in both, by the administrator in the scheduler: their reason stays.
    expect(nodeStep(true, slurmNode({ cordoned: true, reason: 'bad fan' }), drain)).toBeNull();
    expect(nodeStep(false, slurmNode(), null)).toBeNull();
  });
});

describe('nodeReport', () => {
  const now = Date.parse('2026-12-04T10:00:00Z');
  it('says whose cordon it is, and a disagreement only where the scheduler holds back a node Drydock would use', () => {
    const admin = slurmNode({ cordoned: true, reason: 'bad fan', state: 'idle+drain' });
    expect(nodeReport(false, admin, 'slurm:hpc1', null, now)).toMatchObject({
      cordoned: true,
      cordonedByDrydock: false,
      disagreement: expect.stringContaining('bad fan'),
    });
    expect(nodeReport(true, admin, 'slurm:hpc1', null, now).disagreement).toBeNull();
    expect(
      nodeReport(true, slurmNode({ cordoned: true, reason: 'drydock: cordoned' }), 'slurm:hpc1', null, now),
    ).toMatchObject({ cordonedByDrydock: true, disagreement: null });
  });

  it('is down when the scheduler says so, and unresponsive only once it has said so for the grace', () => {
    expect(nodeReport(false, slurmNode({ down: true }), 's', null, now).down).toBe(true);
    const unresponsive = slurmNode({ unresponsive: true, state: 'idle+not_responding' });
    // Just said (as after every RESUME): not down.
    expect(nodeReport(false, unresponsive, 's', null, now).down).toBe(false);
    const since = (ms: number) => ({
      state: 'idle+not_responding',
      changedAt: new Date(now - ms).toISOString(),
    });
    expect(nodeReport(false, unresponsive, 's', since(1_000), now).down).toBe(false);
    expect(nodeReport(false, unresponsive, 's', since(UNRESPONSIVE_GRACE_MS), now).down).toBe(true);
    // Another state said that long: the unresponsive one is new.
    const other = { state: 'idle', changedAt: new Date(now - UNRESPONSIVE_GRACE_MS).toISOString() };
    expect(nodeReport(false, unresponsive, 's', other, now).down).toBe(false);
  });
});

describe('endActionFor and tenantFor', () => {
  const policy = { default: 'requeue' as const, byQueue: { interactive: 'cancel' as const } };
  it('requeues where the partition says so and the job allows it; cancels otherwise', () => {
    expect(endActionFor(policy, work())).toBe('requeue');
    expect(endActionFor(policy, work({ restartable: false }))).toBe('cancel');
    expect(endActionFor(policy, work({ queue: 'interactive' }))).toBe('cancel');
    expect(endActionFor({ default: 'cancel', byQueue: {} }, work())).toBe('cancel');
  });

  it('maps an owner to a tenant, else the fallback, else the node’s tenant', () => {
    const map = { physics: 'research' };
    expect(tenantFor({ owner: 'physics' }, map, 'other', 'acme')).toBe('research');
    expect(tenantFor({ owner: 'chem' }, map, 'other', 'acme')).toBe('other');
    expect(tenantFor({ owner: null }, {}, null, 'acme')).toBe('acme');
    expect(tenantFor({ owner: null }, {}, null, null)).toBeNull();
    // The tenant the scheduler itself names (a namespace's label) comes first.
    expect(tenantFor({ owner: 'physics', tenant: 'lab' }, map, 'other', 'acme')).toBe('lab');
  });
});

describe('workPlan', () => {
  const now = Date.parse('2026-12-04T10:00:00Z');
  const placed = (w: SchedulerWork, nodeId = 'node_1') => ({ work: w, nodeId, tenantId: 'acme' });
  const none = new Set<string>();
  /** Slurm's way: nothing before the deadline, requeue after. */
  const slurm: EndAsking = { endAction: (_work, forced) => (forced ? 'requeue' : null) };
  /** Kubernetes' way: evict while a drain waits, delete after its deadline. */
  const kubernetes: EndAsking = { endAction: (_work, forced) => (forced ? 'delete' : 'evict') };
  const answer = (action: EndingAction, text: string, msAgo: number) => ({
    action,
    answer: text,
    at: new Date(now - msAgo).toISOString(),
  });

  it('records what runs unrecorded, releases what no longer runs, and leaves the rest', () => {
    const plan = workPlan(
      [placed(work({ id: '1' })), placed(work({ id: '2' }))],
      [recorded({ id: 'a2', externalId: '2' }), recorded({ id: 'a3', externalId: '3' })],
      none,
      slurm,
      now,
    );
    expect(plan.observe.map((p) => p.work.id)).toEqual(['1']);
    expect(plan.release.map((a) => a.id)).toEqual(['a3']);
    expect(plan.end).toEqual([]);
  });

  it('releases work recorded on another node and records it where it runs now', () => {
    const plan = workPlan([placed(work(), 'node_2')], [recorded()], none, slurm, now);
    expect(plan.release.map((a) => a.id)).toEqual(['alloc_1']);
    expect(plan.observe.map((p) => p.nodeId)).toEqual(['node_2']);
  });

  it('ends running work a drain asked to end, and asks again only after a while', () => {
    const asked = recorded({ endRequestedAt: new Date(now).toISOString() });
    expect(workPlan([placed(work())], [asked], none, slurm, now).end).toMatchObject([{ action: 'requeue' }]);
    const answered = { ...asked, ending: answer('requeue', 'ok', 1_000) };
    expect(workPlan([placed(work())], [answered], none, slurm, now).end).toEqual([]);
    expect(workPlan([placed(work())], [answered], none, slurm, now + END_AGAIN_AFTER_MS).end).toHaveLength(1);
    // Gone from the scheduler: released, not ended.
    expect(workPlan([], [answered], none, slurm, now)).toMatchObject({ release: [answered], end: [] });
  });

  it('asks politely on a draining node where the scheduler can, never where it cannot or no drain is open', () => {
    const draining = new Set(['node_1']);
    expect(workPlan([placed(work())], [recorded()], draining, kubernetes, now).end).toMatchObject([
      { action: 'evict' },
    ]);
    expect(workPlan([placed(work())], [recorded()], draining, slurm, now).end).toEqual([]);
    expect(workPlan([placed(work())], [recorded()], none, kubernetes, now).end).toEqual([]);
  });

  it('asks again soon after a polite ask was refused (at once when it has room), and by force at once when the deadline comes', () => {
    const draining = new Set(['node_1']);
    const refused = recorded({
      ending: answer('evict', `${REFUSED}eviction blocked by PodDisruptionBudget`, 500),
    });
    expect(workPlan([placed(work())], [refused], draining, kubernetes, now).end).toEqual([]);
    expect(
      workPlan([placed(work())], [refused], draining, kubernetes, now + REFUSED_AGAIN_AFTER_MS).end,
    ).toHaveLength(1);
    // At once when what refused it has room now (its budget allows a disruption since); while it
    // has none, not on the short clock, and at the latest after END_AGAIN_AFTER_MS.
    const roomy: EndAsking = { ...kubernetes, roomNow: () => true };
    expect(workPlan([placed(work())], [refused], draining, roomy, now).end).toHaveLength(1);
    const full: EndAsking = { ...kubernetes, roomNow: () => false };
    const later = now + REFUSED_AGAIN_AFTER_MS;
    expect(workPlan([placed(work())], [refused], draining, full, later).end).toEqual([]);
    expect(workPlan([placed(work())], [refused], draining, full, now + END_AGAIN_AFTER_MS).end).toHaveLength(
      1,
    );
    const accepted = recorded({ ending: answer('evict', 'evicted', 500) });
    expect(workPlan([placed(work())], [accepted], draining, roomy, now).end).toEqual([]);
    expect(
      workPlan([placed(work())], [accepted], draining, kubernetes, now + REFUSED_AGAIN_AFTER_MS).end,
    ).toEqual([]);
    // A forced ask refused is not asked again soon: what refuses it does not pass by itself.
    const forcedRefused = recorded({
      endRequestedAt: new Date(now).toISOString(),
      ending: answer('requeue', `${REFUSED}Requested operation is presently disabled`, 500),
    });
    expect(
      workPlan([placed(work())], [forcedRefused], none, slurm, now + REFUSED_AGAIN_AFTER_MS).end,
    ).toEqual([]);
    const deadline = { ...accepted, endRequestedAt: new Date(now).toISOString() };
    expect(workPlan([placed(work())], [deadline], draining, kubernetes, now).end).toMatchObject([
      { action: 'delete' },
    ]);
  });
});

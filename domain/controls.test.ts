import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  accept,
  acceptanceFailures,
  approve,
  assertControllable,
  block,
  clearMaintenance,
  cordon,
  finishDrain,
  label,
  readopt,
  reject,
  revokeIdentityOf,
  startDrain,
  taint,
  unblock,
  uncordon,
  type Control,
  type NodeChange,
  type NodeState,
} from './controls';
import { DrydockError } from './errors';
import { ACCESS, DRAINING, LIVENESS, PROVISION_STATES } from './node';
import { placementRefusals } from './placement';
import { taintReason } from './taints';

const TAINT_KEYS = ['rma', 'gpu', 'dedicated=acme', 'a/b'];
/** Reasons other controllers own: a control of the operator's never moves them. */
const CONTROLLER_REASONS = ['unreachable', 'condition:GpuXidError', 'condition:DiskPressure'];
const REASONS = [DRAINING, ...CONTROLLER_REASONS, ...TAINT_KEYS.map(taintReason)];

const nodeArb: fc.Arbitrary<NodeState> = fc.record({
  provisionState: fc.constantFrom(...PROVISION_STATES),
  access: fc.constantFrom(...ACCESS),
  cordoned: fc.boolean(),
  maintenance: fc.boolean(),
  noScheduleReasons: fc.uniqueArray(fc.constantFrom(...REASONS)),
  liveness: fc.constantFrom(...LIVENESS),
  // One node in four deleted, so that sequences of controls mostly run on live nodes.
  deletedAt: fc.oneof(
    { arbitrary: fc.constant(null), weight: 3 },
    { arbitrary: fc.constant(new Date(0)), weight: 1 },
  ),
  labels: fc.constant([{ key: 'rack', value: 'r1', source: 'operator' as const }]),
});
const controllableArb = nodeArb.filter((n) => n.deletedAt === null && n.provisionState !== 'decommissioned');

const keysArb = fc.uniqueArray(fc.constantFrom(...TAINT_KEYS), { maxLength: 3 });
const taintArb = fc
  .tuple(keysArb, keysArb)
  .map(([add, remove]) => [add, remove.filter((k) => !add.includes(k))] as const)
  .filter(([add, remove]) => add.length + remove.length > 0);

/** Every control an operator or a workflow runs on one node, with a name for counterexamples. */
const controlArb: fc.Arbitrary<{ name: string; control: Control }> = fc.oneof(
  fc.constantFrom(
    { name: 'cordon', control: cordon },
    { name: 'uncordon', control: uncordon },
    { name: 'startDrain', control: (node: Parameters<Control>[0]) => startDrain(node, null) },
    { name: 'finishDrain', control: finishDrain },
    { name: 'clearMaintenance', control: clearMaintenance },
    { name: 'readopt', control: readopt },
    { name: 'accept', control: accept },
    { name: 'reject', control: reject },
    { name: 'block', control: block },
    { name: 'unblock', control: unblock },
    { name: 'approve', control: approve({ id: 'pool-b', tenantId: 'acme', siteId: 'site-1' }) },
    { name: 'revokeIdentity', control: revokeIdentityOf(3, { certificates: 1, credentials: 1 }) },
    { name: 'label', control: label({ zone: 'z1' }, ['rack']) },
  ),
  taintArb.map(([add, remove]) => ({
    name: `taint(+${add}, -${remove})`,
    control: taint([...add], [...remove]),
  })),
);

/** A control as the database runs it (db/nodes.ts): refuse terminal nodes, then the node's change. */
function run(node: NodeState, control: Control): NodeState {
  assertControllable(node);
  const change = control(node);
  return change ? apply(node, change) : node;
}

function apply(node: NodeState, change: NodeChange): NodeState {
  const after = { ...node, ...change.patch };
  if (!change.labels) return after;
  const { set, removed } = change.labels;
  const kept = node.labels.filter((l) => !removed.includes(l.key) && !(l.key in set));
  const added = Object.entries(set).map(([key, value]) => ({ key, value, source: 'operator' as const }));
  return { ...after, labels: [...kept, ...added] };
}

/** Runs a control; a refusal (a DrydockError) leaves the node as it was, as the transaction rolls back. */
function attempt(node: NodeState, control: Control): NodeState {
  try {
    return run(node, control);
  } catch (error) {
    if (error instanceof DrydockError) return node;
    throw error;
  }
}

/** The node columns each control may write. */
const AXES_OF: Record<string, string[]> = {
  cordon: ['cordoned'],
  uncordon: ['cordoned', 'noScheduleReasons'],
  startDrain: ['cordoned', 'noScheduleReasons'],
  finishDrain: ['noScheduleReasons'],
  clearMaintenance: ['maintenance'],
  readopt: ['provisionState'],
  accept: ['provisionState'],
  reject: ['provisionState'],
  approve: ['provisionState', 'poolId', 'tenantId', 'siteId'],
  block: ['access'],
  unblock: ['access'],
  revokeIdentity: ['identityGeneration'],
  label: [],
  taint: ['noScheduleReasons'],
};

/** The provision moves of controls; every other move is a workflow's (decommission, purge). */
const LIFECYCLE_EDGES = ['pending→adopting', 'pending→rejected', 'adopting→adopted', 'adopted→adopting'];

/** Steps of an operation or a security action, not idempotent controls: they always change. */
const OPERATION_STEPS = ['startDrain', 'finishDrain', 'revokeIdentity'];

const sorted = (reasons: string[]) => [...reasons].sort();
const RUNS = { numRuns: 200 };

describe('node controls (properties)', () => {
  it('never move a deleted or decommissioned node: every control is refused, nothing changes', () => {
    const terminal = nodeArb.filter((n) => n.deletedAt !== null || n.provisionState === 'decommissioned');
    fc.assert(
      fc.property(terminal, controlArb, (node, { control }) => {
        const before = structuredClone(node);
        expect(() => run(node, control)).toThrow(
          expect.objectContaining({ code: 'INVALID_STATE' }) as unknown as Error,
        );
        expect(node).toEqual(before);
      }),
      RUNS,
    );
  });

  it('never make a node decommissioned or deleted, whatever the sequence', () => {
    fc.assert(
      fc.property(controllableArb, fc.array(controlArb, { maxLength: 12 }), (start, controls) => {
        const end = controls.reduce((node, { control }) => attempt(node, control), start);
        expect(end.provisionState).not.toBe('decommissioned');
        expect(end.deletedAt).toBeNull();
      }),
      RUNS,
    );
  });

  it('a refused control changes nothing and a change is never empty: no version bump or event for nothing', () => {
    fc.assert(
      fc.property(nodeArb, controlArb, (node, { name, control }) => {
        const before = structuredClone(node);
        let change: NodeChange | null = null;
        try {
          assertControllable(node);
          change = control(node);
        } catch (error) {
          expect(error).toBeInstanceOf(DrydockError);
        }
        // A control reads the node; it never writes it (a refusal must leave it as it was).
        expect(node).toEqual(before);
        // Drain steps record their operation even on a fenced node; a revocation always moves the
        // generation, which NodeState does not carry.
        if (change && !change.labels && !OPERATION_STEPS.includes(name)) {
          const after = apply(node, change);
          const moved = Object.keys(change.patch).some(
            (key) =>
              JSON.stringify(after[key as keyof NodeState]) !== JSON.stringify(node[key as keyof NodeState]),
          );
          expect(moved).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('are idempotent: the same control again finds the node as asked and changes nothing', () => {
    const idempotent = controlArb.filter(
      ({ name }) => ![...OPERATION_STEPS, 'approve', 'reject'].includes(name),
    );
    fc.assert(
      fc.property(controllableArb, idempotent, (node, { control }) => {
        let once: NodeState;
        try {
          once = run(node, control);
        } catch {
          return; // refused: nothing to repeat
        }
        expect(control(once)).toBeNull();
      }),
      RUNS,
    );
  });

  it('uncordon after cordon restores schedulability, unless another reason holds', () => {
    fc.assert(
      fc.property(controllableArb, fc.constantFrom('acme', 'globex'), (node, tenant) => {
        const back = run(run(node, cordon), uncordon);
        expect(back.cordoned).toBe(false);
        expect(back.noScheduleReasons).not.toContain(DRAINING);
        // Uncordon only touches the cordon and the drain reason.
        const withoutFence = node.noScheduleReasons.filter((r) => r !== DRAINING);
        expect(back).toEqual({ ...node, cordoned: false, noScheduleReasons: withoutFence });
        // It adds no refusal, and a node held only by cordon or drain is schedulable again.
        const before = placementRefusals(node, tenant);
        const after = placementRefusals(back, tenant);
        for (const reason of after) expect(before).toContain(reason);
        if (before.every((r) => r === 'cordoned' || r === DRAINING)) expect(after).toEqual([]);
      }),
      RUNS,
    );
  });

  it('uncordon says whether it ended a drain, and a drain fence is undone by uncordon or by its own end', () => {
    fc.assert(
      fc.property(controllableArb, (node) => {
        const fenced = run(node, (n) => startDrain(n, null));
        expect(fenced.cordoned).toBe(true);
        expect(fenced.noScheduleReasons.filter((r) => r === DRAINING)).toEqual([DRAINING]);
        expect(uncordon(fenced)?.event).toEqual({ type: 'node.uncordoned', data: { endedDrain: true } });
        // The drain's own end lifts only its reason: the node stays cordoned.
        const drained = run(fenced, finishDrain);
        expect(drained.cordoned).toBe(true);
        expect(sorted(drained.noScheduleReasons)).toEqual(
          sorted(node.noScheduleReasons.filter((r) => r !== DRAINING)),
        );
      }),
      RUNS,
    );
  });

  it('each control moves only its own axis', () => {
    fc.assert(
      fc.property(controllableArb, controlArb, (node, { name, control }) => {
        let change: NodeChange | null;
        try {
          change = control(node);
        } catch {
          return;
        }
        const allowed = AXES_OF[name.startsWith('taint(') ? 'taint' : name];
        for (const key of Object.keys(change?.patch ?? {})) expect(allowed, name).toContain(key);
      }),
      RUNS,
    );
  });

  it('provision state moves only along the lifecycle: approve, reject, acceptance, adopt again', () => {
    fc.assert(
      fc.property(controllableArb, fc.array(controlArb, { maxLength: 12 }), (start, controls) => {
        let node = start;
        for (const { control } of controls) {
          const next = attempt(node, control);
          if (next.provisionState !== node.provisionState) {
            expect(LIFECYCLE_EDGES).toContain(`${node.provisionState}→${next.provisionState}`);
          }
          // Acceptance passes only with its checks: access, liveness and no condition reason.
          if (node.provisionState === 'adopting' && next.provisionState === 'adopted') {
            expect(acceptanceFailures(node)).toEqual([]);
          }
          node = next;
        }
      }),
      RUNS,
    );
  });

  it('NoSchedule reasons stay a set under any sequence of controls', () => {
    fc.assert(
      fc.property(controllableArb, fc.array(controlArb, { maxLength: 16 }), (start, controls) => {
        const end = controls.reduce((node, { control }) => attempt(node, control), start);
        expect(new Set(end.noScheduleReasons).size).toBe(end.noScheduleReasons.length);
        // Controllers' reasons are theirs: no operator control adds or removes one.
        const theirs = (n: NodeState) =>
          sorted(n.noScheduleReasons.filter((r) => CONTROLLER_REASONS.includes(r)));
        expect(theirs(end)).toEqual(theirs(start));
      }),
      RUNS,
    );
  });

  it('taints are a set: adding or removing twice is once, and the order of calls does not matter', () => {
    fc.assert(
      fc.property(controllableArb, taintArb, taintArb, (node, [addA, removeA], [addB, removeB]) => {
        const a = taint([...addA], [...removeA]);
        const b = taint([...addB], [...removeB]);
        const ab = run(run(node, a), b);
        const ba = run(run(node, b), a);
        const taints = (n: NodeState) => new Set(n.noScheduleReasons.filter((r) => r.startsWith('taint:')));
        // Calls that do not contradict each other commute; the later call wins a key both name.
        const contradict = [...addA, ...removeA].some((k) => addB.includes(k) || removeB.includes(k));
        if (!contradict) expect(taints(ab)).toEqual(taints(ba));
        for (const key of addB) expect(taints(ab)).toContain(taintReason(key));
        for (const key of removeB) expect(taints(ab)).not.toContain(taintReason(key));
        const expected = new Set(taints(node));
        for (const key of addA) expected.add(taintReason(key));
        for (const key of removeA) expected.delete(taintReason(key));
        expect(taints(run(node, a))).toEqual(expected);
      }),
      RUNS,
    );
  });
});

describe('node controls', () => {
  it('a taint call that names a key both to add and to remove is refused before any node is read', () => {
    expect(() => taint(['rma'], ['rma'])).toThrow(/cannot be added and removed at once: rma/);
    expect(() => taint([], [])).toThrow(/at least one key/);
  });
});

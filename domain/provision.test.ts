import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { accept, approve, readopt, reject, type NodeState } from './controls';
import {
  canMove,
  isTerminal,
  moveTarget,
  PROVISION_MOVES,
  PROVISION_STATES,
  provisionRules,
  type ProvisionMove,
  type ProvisionState,
} from './provision';

/** The provision state machine written out once more, by hand: the table must say the same. */
const EXPECTED: Record<ProvisionState, ProvisionMove[]> = {
  pending: ['approve', 'reject', 'purge', 'decommission'],
  enrolling: ['purge', 'decommission'],
  adopting: ['accept', 'purge', 'decommission'],
  adopted: ['readopt', 'purge', 'decommission'],
  rejected: ['purge', 'decommission'],
  failed: ['purge', 'decommission'],
  retired: ['purge', 'decommission'],
  purging: ['purge'],
  decommissioning: ['finish-decommission', 'purge', 'decommission'],
  decommissioned: [],
};

const node = (provisionState: ProvisionState): NodeState => ({
  provisionState,
  access: 'allowed',
  cordoned: false,
  maintenance: false,
  noScheduleReasons: [],
  liveness: 'alive',
  deletedAt: null,
  labels: [],
});

describe('the provision state table', () => {
  it('allows exactly the moves written out above, and refuses every other', () => {
    for (const state of PROVISION_STATES) {
      for (const move of PROVISION_MOVES) {
        expect(canMove(state, move), `${state} --${move}-->`).toBe(EXPECTED[state].includes(move));
      }
    }
  });

  it('sends each move to its state', () => {
    expect(Object.fromEntries(PROVISION_MOVES.map((m) => [m, moveTarget(m)]))).toEqual({
      approve: 'adopting',
      reject: 'rejected',
      accept: 'adopted',
      readopt: 'adopting',
      purge: 'purging',
      decommission: 'decommissioning',
      'finish-decommission': 'decommissioned',
    });
  });

  it('has one terminal state, decommissioned, and only adopted nodes take placement', () => {
    expect(PROVISION_STATES.filter(isTerminal)).toEqual(['decommissioned']);
    expect(PROVISION_STATES.filter((s) => provisionRules(s).placeable)).toEqual(['adopted']);
  });

  it('admits agents: pending and enrolling only wait, rejected and decommissioned not at all', () => {
    const by = (agent: string) => PROVISION_STATES.filter((s) => provisionRules(s).agent === agent);
    expect(by('wait')).toEqual(['pending', 'enrolling']);
    expect(by('none')).toEqual(['rejected', 'decommissioned']);
    expect(by('full')).toEqual(['adopting', 'adopted', 'failed', 'retired', 'purging', 'decommissioning']);
  });

  it('deletes adopted nodes only once cordoned, and never those decommissioning or gone', () => {
    const by = (d: string) => PROVISION_STATES.filter((s) => provisionRules(s).delete === d);
    expect(by('cordoned')).toEqual(['adopted']);
    expect(by('no')).toEqual(['decommissioning', 'decommissioned']);
  });

  it('refuses an unknown state loudly rather than treating it as some default', () => {
    expect(() => provisionRules('lost' as ProvisionState)).toThrow('unhandled case: "lost"');
    expect(() => moveTarget('wipe' as ProvisionMove)).toThrow('unhandled case');
  });
});

describe('the controls follow the table', () => {
  const state = fc.constantFrom(...PROVISION_STATES);
  const pool = { id: 'pool-a', tenantId: 'acme', siteId: 'fra1' };

  it('approve and reject move a node exactly when the table allows it, else INVALID_STATE', () => {
    fc.assert(
      fc.property(state, (s) => {
        for (const [move, control] of [
          ['approve', approve(pool)],
          ['reject', reject],
        ] as const) {
          if (canMove(s, move)) {
            expect(control(node(s))?.patch.provisionState).toBe(moveTarget(move));
          } else {
            expect(() => control(node(s))).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }));
          }
        }
      }),
    );
  });

  it('readopt moves an adopted node, leaves an adopting one, refuses the rest', () => {
    fc.assert(
      fc.property(state, (s) => {
        if (s === 'adopting') expect(readopt(node(s))).toBeNull();
        else if (canMove(s, 'readopt')) expect(readopt(node(s))?.patch.provisionState).toBe('adopting');
        else expect(() => readopt(node(s))).toThrow(expect.objectContaining({ code: 'INVALID_STATE' }));
      }),
    );
  });

  it('acceptance moves only nodes the table lets accept, and only when its checks pass', () => {
    fc.assert(
      fc.property(state, fc.boolean(), (s, alive) => {
        const change = accept({ ...node(s), liveness: alive ? 'alive' : 'unreachable' });
        expect(change?.patch.provisionState ?? null).toBe(canMove(s, 'accept') && alive ? 'adopted' : null);
      }),
    );
  });
});

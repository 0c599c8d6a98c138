import { describe, expect, it } from 'vitest';
import type { NodeAxes } from './node';
import { placementRefusals } from './placement';

const schedulable: NodeAxes = {
  provisionState: 'adopted',
  access: 'allowed',
  cordoned: false,
  maintenance: false,
  noScheduleReasons: [],
  liveness: 'alive',
  deletedAt: null,
};

describe('placementRefusals', () => {
  it('accepts an adopted, allowed, uncordoned node with no reasons', () => {
    expect(placementRefusals(schedulable, 'acme')).toEqual([]);
  });

  it('names every reason a node refuses', () => {
    const node: NodeAxes = {
      ...schedulable,
      provisionState: 'adopting',
      access: 'blocked',
      cordoned: true,
      maintenance: true,
      noScheduleReasons: ['draining', 'taint:rma'],
      deletedAt: new Date(),
    };
    expect(placementRefusals(node, 'acme')).toEqual([
      'deleted',
      'provisionState:adopting',
      'blocked',
      'cordoned',
      'maintenance',
      'draining',
      'taint:rma',
    ]);
  });

  it('a dedication admits its tenant and nobody else', () => {
    const dedicated = { ...schedulable, noScheduleReasons: ['taint:dedicated=acme'] };
    expect(placementRefusals(dedicated, 'acme')).toEqual([]);
    expect(placementRefusals(dedicated, 'globex')).toEqual(['taint:dedicated=acme']);
  });

  it('a dedication with any other reason, or two dedications, blocks everyone', () => {
    const withTaint = { ...schedulable, noScheduleReasons: ['taint:dedicated=acme', 'taint:rma'] };
    expect(placementRefusals(withTaint, 'acme')).toEqual(['taint:dedicated=acme', 'taint:rma']);
    const two = { ...schedulable, noScheduleReasons: ['taint:dedicated=acme', 'taint:dedicated=globex'] };
    expect(placementRefusals(two, 'acme')).toHaveLength(2);
    expect(placementRefusals(two, 'globex')).toHaveLength(2);
    const cordoned = { ...schedulable, cordoned: true, noScheduleReasons: ['taint:dedicated=acme'] };
    expect(placementRefusals(cordoned, 'acme')).toEqual(['cordoned']);
  });

  it('does not take a dedication prefix of another tenant for its own', () => {
    const node = { ...schedulable, noScheduleReasons: ['taint:dedicated=acme-labs'] };
    expect(placementRefusals(node, 'acme')).toEqual(['taint:dedicated=acme-labs']);
  });
});

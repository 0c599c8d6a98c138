import { describe, expect, it } from 'vitest';
import { parseStep, planProblem, stepText, type MaintenanceStep } from './maintenance';

describe('maintenance steps as --step writes them', () => {
  it('reads each kind and writes it back the same', () => {
    const written = [
      'drain',
      'drain:2h',
      'run:driver-upgrade',
      'run:driver-upgrade:version=570-server',
      'reboot',
      'verify',
      'verify:acceptance',
      'uncordon',
    ];
    for (const text of written) expect(stepText(parseStep(text)!)).toBe(text);
    expect(parseStep('run:logs:since=2h,unit=kubelet')).toEqual({
      kind: 'run',
      action: 'logs',
      args: { since: '2h', unit: 'kubelet' },
    });
    // A drain deadline as a drain takes it: a time ahead (not past), or a duration.
    expect(parseStep('drain:2020-01-01T00:00:00Z')).toBeNull();
  });

  it('refuses what is none of them', () => {
    for (const text of [
      '',
      'reboot:now',
      'run',
      'run:Driver',
      'run:x:=1',
      'run:x:a=1,a=2',
      'run:x:a=',
      'verify:A',
      'drain:soon',
      'format',
    ]) {
      expect(parseStep(text), text).toBeNull();
    }
  });

  it('a plan: one step at least, a drain only first, an uncordon only last', () => {
    const step = (kind: MaintenanceStep['kind']) => ({ kind }) as MaintenanceStep;
    expect(planProblem([])).toBe('a plan needs at least one step');
    expect(planProblem([step('reboot'), step('drain')])).toBe(
      'step 2: drain comes first, before anything runs',
    );
    expect(planProblem([step('uncordon'), step('reboot')])).toBe(
      'step 1: uncordon comes last, once everything else is done',
    );
    expect(planProblem([step('drain'), step('reboot'), step('verify'), step('uncordon')])).toBeNull();
  });
});

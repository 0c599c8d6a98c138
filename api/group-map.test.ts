import { describe, expect, it } from 'vitest';
import { DrydockError } from '../domain/errors';
import { parseGroupMap, roleOf } from './group-map';

const MAP = parseGroupMap(
  `groups:
  ops: { role: operator }
  ml-a: { role: tenant, tenantId: acme, actions: [compute:nodes:read] }
  ml-b: { role: tenant, tenantId: acme, actions: [compute:nodes:cordon, compute:nodes:read] }
  vision: { role: tenant, tenantId: vision, actions: [compute:nodes:read] }
`,
  'map.yaml',
);

describe('the group map', () => {
  it('reads YAML and JSON', () => {
    expect(parseGroupMap('{"groups": {"ops": {"role": "operator"}}}', 'map.json')).toEqual({
      ops: { role: 'operator' },
    });
  });

  it('names the file, the key and the line of every problem', () => {
    const text = `groups:
  ops:
    role: operator
  ml:
    role: tenant
    tenantId: acme
    actions: [compute:nodes:fly]
    pools: [p1]
`;
    expect(() => parseGroupMap(text, 'map.yaml')).toThrow(
      /^map\.yaml: groups\.ml\.actions\.0 \(line 7\): .*; groups\.ml \(line 5\): Unrecognized key: "pools"/,
    );
    expect(() => parseGroupMap('groups: {}', 'm')).toThrow('m: (top level) (line 1): maps no group');
    expect(() => parseGroupMap('groups: [', 'm')).toThrow(/^m: /);
  });

  it("an operator group wins; one tenant's groups add up; several tenants or none are refused", () => {
    expect(roleOf(MAP, ['vision', 'ops'], 'a')).toEqual({ role: 'operator' });
    expect(roleOf(MAP, ['ml-a', 'ml-b', 'other'], 'b')).toEqual({
      role: 'tenant',
      tenantId: 'acme',
      actions: ['compute:nodes:read', 'compute:nodes:cordon'],
    });
    expect(() => roleOf(MAP, ['ml-a', 'vision'], 'c')).toThrow(DrydockError);
    expect(() => roleOf(MAP, ['ml-a', 'vision'], 'c')).toThrow('several tenants (acme, vision)');
    expect(() => roleOf(MAP, ['other', 'toString'], 'd')).toThrow('in no group Drydock maps');
  });
});

import { describe, expect, it } from 'vitest';
import { Output, table, type Io } from './output';
import { commands } from './commands';
import { usageLine } from '../cli-kit/help';
import { drydock } from './program';
import { previewDetails } from './views/decommission';
import { labelsTable, taintsOf } from './views/nodes';
import { capacityTable } from './views/pools';
import { tokenDetails, tokensTable, type JoinToken } from './views/tokens';
import { formatElapsed } from './wait';

function capture(stderrIsTTY: boolean) {
  const written = { stdout: '', stderr: '' };
  const io: Io = {
    stdout: (text) => void (written.stdout += text),
    stderr: (text) => void (written.stderr += text),
    stderrIsTTY,
    columns: 40,
  };
  return { io, written };
}

describe('Output', () => {
  it('prints JSON alone on stdout with --json, the human text otherwise', () => {
    const json = capture(false);
    new Output(json.io, true).result({ a: 1 }, () => 'human');
    expect(JSON.parse(json.written.stdout)).toEqual({ a: 1 });
    const human = capture(false);
    new Output(human.io, false).result({ a: 1 }, () => 'human');
    expect(human.written.stdout).toBe('human\n');
  });

  it('draws a progress line only on a terminal, and clears it before the result', () => {
    const pipe = capture(false);
    new Output(pipe.io, false).progress('waiting');
    expect(pipe.written.stderr).toBe('');

    const tty = capture(true);
    const out = new Output(tty.io, false);
    out.progress('x'.repeat(60));
    expect(tty.written.stderr).toBe(`\r\x1b[2K${'x'.repeat(38)}…`);
    out.result(null, () => 'done');
    expect(tty.written.stderr.endsWith('\r\x1b[2K')).toBe(true);
    expect(tty.written.stdout).toBe('done\n');
  });
});

describe('table', () => {
  it('aligns columns and leaves no trailing spaces', () => {
    expect(
      table(
        ['ID', 'NAME', 'X'],
        [
          ['a', 'long-name', ''],
          ['bbbb', 'n', 'y'],
        ],
      ),
    ).toBe(['ID    NAME       X', 'a     long-name', 'bbbb  n          y'].join('\n'));
  });
});

describe('node control views', () => {
  it('lists buckets in the order they are checked, any new one after, then the total', () => {
    const buckets = {
      schedulable: 3,
      cordoned: 1,
      maintenance: 0,
      unhealthy: 2,
      unreachable: 0,
      quarantined: 1,
    };
    expect(capacityTable({ poolId: 'p', total: 7, buckets }).split('\n')).toEqual([
      'BUCKET       NODES',
      'maintenance  0',
      'unreachable  0',
      'cordoned     1',
      'unhealthy    2',
      'schedulable  3',
      'quarantined  1',
      'total        7',
    ]);
  });

  it('shows an empty label value as "" and only operator taints as taints', () => {
    expect(labelsTable([{ key: 'e', value: '', source: 'operator' }])).toBe(
      'KEY  VALUE  SOURCE\ne    ""     operator',
    );
    expect(labelsTable([])).toBe('no labels');
    expect(taintsOf({ noScheduleReasons: ['draining', 'taint:dedicated=acme', 'condition:GpuXid'] })).toEqual(
      ['dedicated=acme'],
    );
  });
});

describe('join token views', () => {
  const now = new Date('2026-01-02T12:00:00.000Z');
  const token: JoinToken = {
    id: 'jt_01k5w8v3x9q2m4n6p8r0s2t4v6',
    poolId: 'default',
    tenantId: 'acme',
    labels: { team: 'data' },
    description: 'data team laptops',
    maxUses: 5,
    uses: 2,
    usesLeft: 3,
    expiresAt: '2026-01-03T12:00:00.000Z',
    createdBy: 'operator:bootstrap',
    createdAt: '2026-01-02T12:00:00.000Z',
    revokedAt: null,
  };

  it('lists uses as used/max (∞ when unlimited), the expiry or never, and marks expired ones', () => {
    const unlimited = {
      ...token,
      id: 'jt_2',
      maxUses: 0,
      usesLeft: null,
      expiresAt: null,
      description: null,
    };
    const expired = { ...token, id: 'jt_3', tenantId: null, expiresAt: '2026-01-01T00:00:00.000Z' };
    expect(
      tokensTable([token, unlimited, expired], now)
        .split('\n')
        .map((line) => line.split(/ {2,}/)),
    ).toEqual([
      ['ID', 'POOL', 'TENANT', 'USES', 'EXPIRES', 'REVOKED', 'DESCRIPTION'],
      [token.id, 'default', 'acme', '2/5', '2026-01-03T12:00:00.000Z', '-', 'data team laptops'],
      ['jt_2', 'default', 'acme', '2/∞', 'never', '-', '-'],
      ['jt_3', 'default', '-', '2/5', '2026-01-01T00:00:00.000Z (expired)', '-', 'data team laptops'],
    ]);
  });

  it('shows the secret, and says it is shown only once, only when there is one', () => {
    const created = tokenDetails({ ...token, uses: 0, secret: 'ddj_s3cret' }, now);
    expect(created).toMatch(/^Secret:\s+ddj_s3cret$/m);
    expect(created).toMatch(/^Uses:\s+0\/5$/m);
    expect(created).toMatch(/^Labels:\s+team=data$/m);
    expect(created).toContain('shown only this once');
    expect(tokenDetails(token, now)).not.toMatch(/Secret|once/);
  });
});

describe('usageLine', () => {
  it('shows required flags without brackets and a repeatable one with ...', () => {
    const create = commands.find((c) => c.words.join(' ') === 'token create')!;
    expect(usageLine(drydock, create)).toBe(
      'drydock token create --pool P [--tenant T] --ttl DURATION --max-uses N [--label K=V,…]... [--description D]',
    );
  });
});

describe('formatElapsed', () => {
  it('is short at every scale', () => {
    expect([999, 45_000, 185_000, 7_800_000].map(formatElapsed)).toEqual(['1s', '45s', '3m05s', '2h10m']);
  });
});

describe('previewDetails', () => {
  const preview = {
    nodeId: 'node_01k5w8v3x9q2m4n6p8r0s2t4v6',
    hostname: 'gpu-b7-03',
    displayName: 'GPU B7-03',
    confirmationIdentities: ['node_01k5w8v3x9q2m4n6p8r0s2t4v6', 'gpu-b7-03', 'GPU B7-03'],
    nodeGeneration: 14,
    dependencyDigest: `sha256:${'0f'.repeat(32)}`,
    ready: false,
    blockers: [
      { kind: 'allocation', id: 'alloc_1', message: 'live job until 2026-01-02T13:00:00.000Z' },
      { kind: 'liveness', id: 'node_01k5w8v3x9q2m4n6p8r0s2t4v6', message: 'liveness is alive' },
    ],
    cleanup: [
      { kind: 'credentials', count: 2 },
      { kind: 'accelerators', count: 8 },
    ],
    retained: [{ kind: 'events', count: 311 }],
  };

  it('shows what to type and present, every blocker, then what goes and what stays', () => {
    expect(previewDetails(preview).split('\n')).toEqual([
      'Node:        gpu-b7-03 (node_01k5w8v3x9q2m4n6p8r0s2t4v6) "GPU B7-03"',
      'Confirm as:  node_01k5w8v3x9q2m4n6p8r0s2t4v6, gpu-b7-03, "GPU B7-03"',
      'Generation:  14',
      `Digest:      sha256:${'0f'.repeat(32)}`,
      'Ready:       no: 2 blockers',
      '',
      'BLOCKER     ID                               MESSAGE',
      'allocation  alloc_1                          live job until 2026-01-02T13:00:00.000Z',
      'liveness    node_01k5w8v3x9q2m4n6p8r0s2t4v6  liveness is alive',
      '',
      'CLEANUP       COUNT',
      'credentials   2',
      'accelerators  8',
      '',
      'RETAINED  COUNT',
      'events    311',
    ]);
  });

  it('says ready and lists no blockers once there are none', () => {
    const ready = previewDetails({ ...preview, displayName: null, ready: true, blockers: [] });
    expect(ready).toMatch(/^Node:\s+gpu-b7-03 \(node_01k5w8v3x9q2m4n6p8r0s2t4v6\)$/m);
    expect(ready).toMatch(/^Ready:\s+yes$/m);
    expect(ready).not.toContain('BLOCKER');
  });
});

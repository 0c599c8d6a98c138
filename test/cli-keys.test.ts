import { describe, expect, it } from 'vitest';
import { line, rows, useCli, type Refusal } from './support/cli';
import { call } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);
const { drydock } = cli;

/** What a caller holding `secret` gets from a route tenants and operators may both read. */
const nodesWith = async (secret: string) => (await call(h, 'GET', '/v1/nodes', { token: secret })).status;

describe('drydock keys create, list, rotate and revoke', () => {
  it('creates keys and shows each secret once; rotates one with a grace; revokes', async () => {
    const human = await drydock(
      line('keys create', {
        name: 'ci-runner',
        tenant: 'acme',
        action: 'compute:nodes:read,compute:nodes:cordon',
      }),
    );
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toMatch(/^Role:\s+tenant acme$/m);
    expect(human.stdout).toMatch(/^Actions:\s+compute:nodes:read, compute:nodes:cordon$/m);
    expect(human.stdout).toContain('The secret is shown only this once');
    const tenantId = /^ID:\s+(key_[0-9a-z]{26})$/m.exec(human.stdout)![1]!;
    const tenantSecret = /^Secret:\s+(ddk_\S+)$/m.exec(human.stdout)![1]!;
    const operator = await drydock(['keys', 'create', '--name', 'ops-admin', '--json']);
    expect(operator.code).toBe(0);
    const operatorKey = JSON.parse(operator.stdout);
    expect(operatorKey).toMatchObject({
      name: 'ops-admin',
      tenantId: null,
      secret: expect.stringMatching(/^ddk_/),
    });

    const listed = await drydock(['keys', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(tenantSecret);
    expect(rows(listed.stdout).find((r) => r.startsWith(tenantId))).toMatch(
      /ci-runner\s+tenant acme\s+compute:nodes:read,compute:nodes:cordon/,
    );
    expect(rows(listed.stdout).find((r) => r.startsWith(operatorKey.id))).toMatch(
      /ops-admin\s+operator\s+all/,
    );

    // Rotated with the operator key it rotates: both of its secrets work through the grace.
    const rotated = await drydock(['keys', 'rotate', tenantId, '--grace', '1h', '--json'], {
      token: operatorKey.secret,
    });
    expect(rotated.code).toBe(0);
    const next = JSON.parse(rotated.stdout);
    expect(next).toMatchObject({
      name: 'ci-runner',
      tenantId: 'acme',
      actions: ['compute:nodes:read', 'compute:nodes:cordon'],
      previous: { id: tenantId, revokedAt: expect.any(String) },
    });
    expect(Date.parse(next.previous.revokedAt) - Date.now()).toBeGreaterThan(3_500_000);
    expect(await nodesWith(tenantSecret)).toBe(200);
    expect(await nodesWith(next.secret)).toBe(200);
    const during = await drydock(['keys', 'list']);
    expect(rows(during.stdout).find((r) => r.startsWith(tenantId))).toMatch(/\(grace\)$/);
    expect(rows(during.stdout).find((r) => r.startsWith(next.id))).toMatch(/\s-$/);

    // A rotated key is not rotated again; its successor is, here with no grace at all.
    const twice = await drydock(['keys', 'rotate', tenantId]);
    expect(twice.code).toBe(3);
    expect(twice.stderr).toContain('already rotated or revoked');
    const immediate = await drydock(['keys', 'rotate', next.id, '--grace', '0']);
    expect(immediate.code).toBe(0);
    expect(immediate.stdout).toMatch(new RegExp(`^Replaces:\\s+${next.id}, accepted until `, 'm'));
    expect(await nodesWith(next.secret)).toBe(401);
    const newest = /^Secret:\s+(ddk_\S+)$/m.exec(immediate.stdout)![1]!;
    expect(await nodesWith(newest)).toBe(200);

    // Revoking the first key ends its grace now.
    const revoked = await drydock(['keys', 'revoke', tenantId]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(new RegExp(`^revoked ${tenantId} \\(ci-runner\\) at `));
    expect(await nodesWith(tenantSecret)).toBe(401);
  });

  it('is for operators only (exit 5); an unknown key is exit 4', async () => {
    const tenant = await drydock(
      line('keys create', { name: 'reader', tenant: 'acme', action: 'compute:nodes:read', json: true }),
    );
    const secret = JSON.parse(tenant.stdout).secret as string;
    expect((await drydock(['keys', 'list'], { token: secret })).code).toBe(5);
    expect((await drydock(['keys', 'rotate', 'key_01k5w8v3x9q2m4n6p8r0s2t4v6'])).code).toBe(4);
  });

  it('refuses bad lines before sending anything (exit 2)', async () => {
    const lines: Refusal[] = [
      [
        ['keys', 'rotate', 'jt_01k5w8v3x9q2m4n6p8r0s2t4v6'],
        "ID must look like key_ followed by 26 lowercase ULID characters, got 'jt_01k5w8v3x9q2m4n6p8r0s2t4v6'",
      ],
      [
        ['keys', 'rotate', 'key_01k5w8v3x9q2m4n6p8r0s2t4v6', '--grace', '1500ms'],
        '--grace must be whole seconds',
      ],
      [
        ['keys', 'rotate', 'key_01k5w8v3x9q2m4n6p8r0s2t4v6', '--grace', '8d'],
        '--grace must be whole seconds',
      ],
      [['keys', 'create', '--name', 'x', '--action', 'compute:nodes:read'], '--action needs --tenant'],
      [
        ['keys', 'create', '--name', 'x', '--tenant', 'acme', '--action', 'compute:everything'],
        "--action: 'compute:everything' is not one of ",
      ],
      [['keys', 'create', '--name', 'Bad Name'], '--name must be 1–63 of a-z 0-9 . _ -'],
      [['keys', 'create'], 'missing --name N'],
    ];
    await cli.refuses(lines);
  });
});

import { describe, expect, it } from 'vitest';
import { createToken, join } from '../support/agents';
import { call, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { csrfOf, flashOf, signedIn, unescapeHtml, useConsole } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

const PUBLIC_KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEwaRIkOs6iCAP+LcJubwzS0EOGWp1uDGmDG2+l8iElE alice@laptop';

describe('break-glass SSH certificates on the node page', () => {
  it('lists who issued one, why and until when; revoke takes CSRF, a ticked box and a reason', async () => {
    await seedPool(h, { id: 'pool-ssh-console', tenantId: 'acme' });
    const token = await createToken(h, { poolId: 'pool-ssh-console' });
    const nodeId = (await join(h, { token: token.secret })).body.nodeId as string;
    const issued = await call(h, 'POST', `/v1/nodes/${nodeId}/ssh-certificates`, {
      body: { publicKey: PUBLIC_KEY, reason: 'nvidia-smi hangs <b>', ttl: '30m' },
    });
    expect(issued.status).toBe(201);
    const { serial, validBefore } = issued.body;
    const revokePath = `/console/nodes/${nodeId}/ssh-certificates/${serial}/revoke`;

    // A key that may read the node but not revoke sees the certificate and no form.
    const reader = await signedIn(server.base, (await tenantKey(h, 'acme', ['compute:nodes:read'])).secret);
    const read = await reader.get(`/console/nodes/${nodeId}`);
    expect(unescapeHtml(read.html)).toContain('nvidia-smi hangs <b>');
    expect(read.html).not.toContain('<b>');
    expect(read.html).not.toContain(`action="${revokePath}"`);

    const op = await signedIn(server.base, h.operatorKey);
    const page = await op.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain(`<code>${serial}</code>`);
    expect(page.html).toContain('key:bootstrap-operator');
    expect(page.html).toContain(validBefore);
    expect(page.html).toContain(`action="${revokePath}"`);

    const revokedAt = async () =>
      (await call(h, 'GET', `/v1/nodes/${nodeId}/ssh-certificates`)).body.items[0].revokedAt;
    expect((await op.post(revokePath, { reason: 'lost laptop', confirm: 'yes' })).status).toBe(403);
    await op.post(revokePath, { csrf: csrfOf(page), reason: 'lost laptop' });
    expect(flashOf(await op.get(`/console/nodes/${nodeId}`))).toEqual([
      'error',
      'Revoke needs its box ticked: nothing was done.',
    ]);
    expect(await revokedAt()).toBeNull();

    const done = await op.post(revokePath, { csrf: csrfOf(page), reason: 'lost laptop', confirm: 'yes' });
    expect(done).toMatchObject({ status: 303, location: `/console/nodes/${nodeId}` });
    const after = await op.get(`/console/nodes/${nodeId}`);
    expect(flashOf(after)?.[1]).toMatch(new RegExp(`^SSH certificate ${serial} revoked`));
    expect(await revokedAt()).not.toBeNull();
    expect(after.html).toContain('by key:bootstrap-operator: lost laptop');
    expect(after.html).not.toContain(`action="${revokePath}"`);
  });
});

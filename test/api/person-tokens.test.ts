import { generateKeyPairSync } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../api/app';
import { parseGroupMap } from '../../api/group-map';
import {
  OTHER_RESOURCE,
  startOidcProvider,
  type ProviderPerson,
  type RunningOidcProvider,
} from '../../scripts/services/oidc-provider';
import { call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { signIn, trusting } from '../support/oidc';

const PEOPLE: ProviderPerson[] = [
  { email: 'alice@example.com', name: 'Alice', groups: ['drydock-operators', 'ml-team'] },
  { email: 'bob@example.com', name: 'Bob', groups: ['ml-team', 'ml-readers', 'unmapped'] },
  { email: 'carol@example.com', name: 'Carol', groups: ['unmapped'] },
  { email: 'dave@example.com', name: 'Dave', groups: ['ml-team', 'vision-team'] },
];

const GROUP_MAP = parseGroupMap(
  `groups:
  drydock-operators:
    role: operator
  ml-team:
    role: tenant
    tenantId: acme
    actions: [compute:nodes:cordon]
  ml-readers:
    role: tenant
    tenantId: acme
    actions: [compute:nodes:read]
  vision-team:
    role: tenant
    tenantId: vision
    actions: [compute:nodes:read]
`,
  'test map',
);

const SKEW_SECONDS = 60;
let provider: RunningOidcProvider;
let elsewhere: RunningOidcProvider;
/** The API's clock for tokens (epoch ms); undefined: the real one. */
let now: number | undefined;

beforeAll(async () => {
  provider = await startOidcProvider({ people: PEOPLE, otherAudience: 'another-api' });
  // Another issuer with the same people and the same audience: its tokens are not ours to trust.
  elsewhere = await startOidcProvider({ people: PEOPLE });
});
afterAll(async () => {
  await provider?.stop();
  await elsewhere?.stop();
});

const h = useHarness({
  worker: false,
  oidc: () => ({
    ...trusting(provider),
    clockSkewSeconds: SKEW_SECONDS,
    groupMap: GROUP_MAP,
    now: () => now ?? Date.now(),
  }),
});

async function nodeOf(tenantId: string): Promise<string> {
  const pool = `pool-${tenantId}-${Math.random().toString(36).slice(2, 8)}`;
  await seedPool(h, { id: pool, tenantId });
  return seedNode(h, { poolId: pool });
}

describe('people signed in at the OpenID provider', () => {
  it('a person in an operator group is an operator, and what they do names them', async () => {
    const { accessToken } = await signIn(provider, 'alice@example.com');
    const whoami = await call(h, 'GET', '/v1/whoami', { token: accessToken });
    expect(whoami.status).toBe(200);
    expect(whoami.body).toMatchObject({
      kind: 'operator',
      name: 'alice@example.com',
      tenantId: null,
      person: { issuer: provider.issuer, subject: 'alice@example.com', email: 'alice@example.com' },
    });
    // An operator route, and a node of a tenant alice's tenant group does not name.
    expect((await call(h, 'GET', '/v1/keys', { token: accessToken })).status).toBe(200);
    const node = await nodeOf('vision');
    const cordon = await call(h, 'POST', `/v1/nodes/${node}/cordon`, {
      token: accessToken,
      body: { reason: 'rack b7 PSU swap' },
    });
    expect(cordon.status, JSON.stringify(cordon.body)).toBe(200);
    const [event] = await eventsOf(h, node, 'node.cordoned');
    expect(event).toMatchObject({ actor: 'user:alice@example.com', reason: 'rack b7 PSU swap' });
    // The audit names the provider identity behind the email (her subject at this issuer).
    const audit = await call(h, 'GET', `/v1/audit?actor=alice@example.com&type=node.cordoned`, {
      token: accessToken,
    });
    expect(audit.body.items.find((e: { nodeId: string }) => e.nodeId === node)).toMatchObject({
      actor: 'user:alice@example.com',
      person: { issuer: provider.issuer, subject: 'alice@example.com', email: 'alice@example.com' },
    });
  });

  it("a person in tenant groups is that tenant, with the union of the groups' actions", async () => {
    const { accessToken } = await signIn(provider, 'bob@example.com');
    const whoami = await call(h, 'GET', '/v1/whoami', { token: accessToken });
    expect(whoami.body).toMatchObject({
      kind: 'tenant',
      name: 'bob@example.com',
      tenantId: 'acme',
      actions: ['compute:nodes:read', 'compute:nodes:cordon'],
    });
    const own = await nodeOf('acme');
    const other = await nodeOf('vision');
    const cordon = await call(h, 'POST', `/v1/nodes/${own}/cordon`, { token: accessToken, body: {} });
    expect(cordon.status, JSON.stringify(cordon.body)).toBe(200);
    const [event] = await eventsOf(h, own, 'node.cordoned');
    expect(event?.actor).toBe('user:bob@example.com');
    // Another tenant's node is hidden, as from a key of acme's.
    expect(
      (await call(h, 'POST', `/v1/nodes/${other}/cordon`, { token: accessToken, body: {} })).status,
    ).toBe(404);
    const drain = await call(h, 'POST', `/v1/nodes/${own}/drain`, {
      token: accessToken,
      body: { reason: 'no', deadline: '1h' },
      headers: { 'idempotency-key': 'bob-drain' },
    });
    expect(drain.status).toBe(403);
    expect(drain.body.error).toMatchObject({ code: 'FORBIDDEN', details: { action: 'compute:nodes:drain' } });
    expect(drain.body.error.message).toContain("bob@example.com's groups grant no compute:nodes:drain");
    const keys = await call(h, 'GET', '/v1/keys', { token: accessToken });
    expect(keys.status).toBe(403);
    expect(keys.body.error.message).toContain('needs an operator');
  });

  it('a person in no mapped group, or in groups of two tenants, is refused with the reason (403)', async () => {
    const carol = await call(h, 'GET', '/v1/whoami', {
      token: (await signIn(provider, 'carol@example.com')).accessToken,
    });
    expect(carol.status).toBe(403);
    expect(carol.body.error.code).toBe('FORBIDDEN');
    expect(carol.body.error.message).toContain('carol@example.com is signed in but in no group Drydock maps');
    const dave = await call(h, 'GET', '/v1/whoami', {
      token: (await signIn(provider, 'dave@example.com')).accessToken,
    });
    expect(dave.status).toBe(403);
    expect(dave.body.error.message).toContain('groups of several tenants (acme, vision)');
  });

  it('refuses (401) a token of another issuer, of another audience, expired, or not signed by the provider', async () => {
    const refused = async (token: string, reason: string) => {
      const reply = await call(h, 'GET', '/v1/whoami', { token });
      expect(reply.status, JSON.stringify(reply.body)).toBe(401);
      expect(reply.body.error.code).toBe('UNAUTHENTICATED');
      expect(reply.body.error.message).toContain(reason);
    };
    await refused((await signIn(elsewhere, 'alice@example.com')).accessToken, 'issued by another provider');
    const otherAudience = await signIn(provider, 'alice@example.com', OTHER_RESOURCE);
    expect(decodeJwt(otherAudience.accessToken).aud).toBe('another-api');
    await refused(otherAudience.accessToken, 'meant for another audience');

    // Expiry by the API's clock, with the configured skew on either side of `exp`.
    const real = await signIn(provider, 'alice@example.com');
    const exp = decodeJwt(real.accessToken).exp! * 1000;
    try {
      now = exp + (SKEW_SECONDS - 5) * 1000;
      expect((await call(h, 'GET', '/v1/whoami', { token: real.accessToken })).status).toBe(200);
      now = exp + (SKEW_SECONDS + 5) * 1000;
      await refused(real.accessToken, 'it has expired');
    } finally {
      now = undefined;
    }

    // Forgeries: the provider's claims, signed by a key it never had (its own kid, and a new one).
    const claims = decodeJwt(real.accessToken);
    const { kid } = decodeProtectedHeader(real.accessToken);
    const forger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forge = (header: { kid?: string }) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', ...header }).sign(forger);
    await refused(await forge({ kid }), 'its signature does not verify');
    await refused(await forge({ kid: 'not-the-providers' }), "a key the provider's key set does not hold");
    // `alg: none`: the same claims, no signature at all.
    const encode = (part: object) => Buffer.from(JSON.stringify(part)).toString('base64url');
    await refused(`${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(claims)}.`, 'not accepted');
    await refused('eyJhbGciOiJSUzI1NiJ9.bm90LWpzb24.c2ln', 'not a valid signed token');
    // The real token still works: none of the above is a refusal of the provider.
    expect((await call(h, 'GET', '/v1/whoami', { token: real.accessToken })).status).toBe(200);
  });

  it('without OpenID configured, a provider token is an unknown credential (401)', async () => {
    const { accessToken } = await signIn(provider, 'alice@example.com');
    const app = createApp({ ...h.deps, personTokens: undefined });
    const reply = await app.request('/v1/whoami', { headers: { authorization: `Bearer ${accessToken}` } });
    expect(reply.status).toBe(401);
    expect(((await reply.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
  });
});

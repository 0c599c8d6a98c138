import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../domain/errors';
import { allocate, call, seedNode, seedPool } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness();

/** Every route of the API so far, with `:node`, `:op`, `:alloc`, `:key`, `:pool` filled per run. */
const ROUTES: [string, string][] = [
  ['GET', '/v1/nodes'],
  ['GET', '/v1/nodes/:node'],
  ['GET', '/v1/nodes/:node/events'],
  ['POST', '/v1/nodes/:node/cordon'],
  ['POST', '/v1/nodes/:node/uncordon'],
  ['POST', '/v1/nodes/:node/drain'],
  ['POST', '/v1/nodes/:node/taint'],
  ['POST', '/v1/nodes/:node/label'],
  ['POST', '/v1/nodes/:node/maintenance'],
  ['POST', '/v1/nodes/:node/adopt'],
  ['DELETE', '/v1/nodes/:node'],
  ['GET', '/v1/pools/:pool/capacity'],
  ['GET', '/v1/operations'],
  ['GET', '/v1/operations/:op'],
  ['POST', '/v1/allocations'],
  ['POST', '/v1/allocations/:alloc/release'],
  ['POST', '/v1/pools'],
  ['GET', '/v1/pools'],
  ['GET', '/v1/pools/:pool'],
  ['POST', '/v1/keys'],
  ['GET', '/v1/keys'],
  ['DELETE', '/v1/keys/:key'],
  ['GET', '/healthz'],
  ['GET', '/openapi.json'],
];

const CODES = new Set(Object.keys(ERROR_STATUS));
/** At least 10,000 generated requests in CI (issue 3); FUZZ_RUNS raises it for a longer hunt. */
const RUNS = Math.max(10_000, Number(process.env.FUZZ_RUNS ?? 0));

const jsonValue = fc.jsonValue({ maxDepth: 3 });
const nastyString = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.constantFrom(
    '',
    ' ',
    'null',
    '0',
    '-1',
    '1e309',
    '"7"',
    'node_',
    '../../etc/passwd',
    '%00',
    '\u0000',
    '🚀',
    "' or 1=1 --",
  ),
);
const body = fc.oneof(
  jsonValue,
  fc.dictionary(
    fc.constantFrom(
      'reason',
      'version',
      'nodeId',
      'tenantId',
      'kind',
      'endsAt',
      'id',
      'siteId',
      'policy',
      'grants',
      'name',
      'actions',
      'deadline',
      'add',
      'remove',
      'set',
      'maintenance',
      'x',
    ),
    fc.oneof(
      jsonValue,
      nastyString,
      fc.array(nastyString, { maxLength: 40 }),
      fc.dictionary(nastyString, nastyString),
    ),
  ),
  nastyString.map((s) => ({ raw: s })),
);
const pathId = (real: string) =>
  fc.oneof(
    fc.constant(real),
    nastyString.map((s) => encodeURIComponent(s)),
    fc.constant(real.toUpperCase()),
  );
const query = fc.dictionary(
  fc.constantFrom(
    'limit',
    'cursor',
    'poolId',
    'cordoned',
    'provisionState',
    'type',
    'kind',
    'status',
    'nodeId',
    'includeDeleted',
    'tenantId',
  ),
  nastyString,
);
/** Values an HTTP client can send at all: visible ASCII, inner spaces. */
const headerValue = nastyString.filter((s) => /^([\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?)?$/.test(s));
const headers = fc.record(
  {
    'if-match': headerValue,
    'idempotency-key': headerValue,
    'content-type': fc.constantFrom(
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=utf-8',
    ),
  },
  { requiredKeys: [] },
);

describe('bad input never yields a 5xx', () => {
  it('answers generated requests on every route with a documented status and the error envelope', async () => {
    await seedPool(h, { id: 'pool-fuzz', tenantId: 'acme' });
    const node = await seedNode(h, { poolId: 'pool-fuzz', tenantId: 'acme' });
    const alloc = await allocate(h, node, 'acme');
    const op = (await call(h, 'POST', `/v1/nodes/${node}/drain`)).body.operation.id as string;
    const key = (
      await call(h, 'POST', '/v1/keys', {
        body: { name: 'fuzz', tenantId: 'acme', actions: ['compute:nodes:read'] },
      })
    ).body.id as string;
    const ids = { node, op, alloc, key, pool: 'pool-fuzz' };
    let requests = 0;

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.record({
          node: pathId(ids.node),
          op: pathId(ids.op),
          alloc: pathId(ids.alloc),
          key: pathId(ids.key),
          pool: pathId(ids.pool),
        }),
        query,
        fc.option(body, { nil: undefined }),
        headers,
        async ([method, template], idsForRun, q, payload, extraHeaders) => {
          const path = template.replace(
            /:(node|op|alloc|key|pool)/g,
            (_, k: keyof typeof ids) => idsForRun[k],
          );
          const search = new URLSearchParams(q).toString();
          const raw =
            payload && typeof payload === 'object' && 'raw' in payload ? String(payload.raw) : payload;
          const reply = await call(h, method, `${path}${search ? `?${search}` : ''}`, {
            body: method === 'GET' ? undefined : raw,
            headers: extraHeaders,
          });
          requests++;
          expect(reply.status, `${method} ${path}`).toBeLessThan(500);
          if (reply.status >= 400) {
            expect(reply.body?.error?.code, JSON.stringify(reply.body)).toSatisfy((c: string) =>
              CODES.has(c),
            );
            expect(ERROR_STATUS[reply.body.error.code as keyof typeof ERROR_STATUS]).toBe(reply.status);
            expect(reply.body.error.message).toEqual(expect.any(String));
          }
        },
      ),
      { numRuns: RUNS },
    );
    expect(requests).toBeGreaterThanOrEqual(RUNS);
  }, 300_000);
});

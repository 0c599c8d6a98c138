import { describe, expect, it } from 'vitest';
import { seedPoolNode } from '../support/builders';
import { call, tenantKey, type Reply } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

// Every body goes through the route's validators, however it is spelled; these pin that no answer
// depends on the spelling.

/** A reply with what differs between two nodes or two requests (ids, times) taken out. */
function comparable(reply: Reply, nodeId: string) {
  const text = JSON.stringify(reply.body)
    .replaceAll(nodeId, '<node>')
    .replace(/"(createdAt|updatedAt|lastSeenAt|requestId)":"[^"]*"/g, '"$1":"…"')
    .replace(/"hostname":"[^"]*"/g, '"hostname":"…"');
  return { status: reply.status, body: JSON.parse(text) as unknown };
}

/** The same call on a fresh node per spelling: every answer alike. */
async function sameAnswers(
  path: (nodeId: string) => string,
  bodies: string[],
  options: {
    token?: string;
    headers?: Record<string, string>;
    before?: (nodeId: string) => Promise<void>;
  } = {},
) {
  const answers = [];
  for (const body of bodies) {
    const nodeId = await seedPoolNode(h, 'pool-bodies');
    await options.before?.(nodeId);
    const reply = await call(h, 'POST', path(nodeId), {
      body,
      token: options.token,
      headers: options.headers,
    });
    answers.push(comparable(reply, nodeId));
  }
  for (const [i, answer] of answers.entries()) expect(answer, bodies[i]).toEqual(answers[0]);
  return answers[0]!;
}

describe('control bodies', () => {
  it('cordon and uncordon with {} answer as any other spelling of an empty body', async () => {
    const cordoned = await sameAnswers((id) => `/v1/nodes/${id}/cordon`, ['{}', '{ }', ' {}\n']);
    expect(cordoned).toMatchObject({ status: 200, body: { cordoned: true, version: 2 } });
    const uncordoned = await sameAnswers((id) => `/v1/nodes/${id}/uncordon`, ['{}', '{ }'], {
      before: async (id) => void (await call(h, 'POST', `/v1/nodes/${id}/cordon`, { body: {} })),
    });
    expect(uncordoned).toMatchObject({ status: 200, body: { cordoned: false, version: 3 } });
  });

  it('a label set answers as the same set spelled otherwise', async () => {
    const labeled = await sameAnswers(
      (id) => `/v1/nodes/${id}/label`,
      ['{"set":{"rack":"b7","gpu.model":"H100"}}', '{ "set": { "rack": "b7", "gpu.model": "H100" } }'],
    );
    expect(labeled).toMatchObject({ status: 200, body: { version: 2 } });
  });

  it('refusals are the same however the body is spelled', async () => {
    const cases: [string, string[]][] = [
      ['{"set":{"__proto__":"x"}}', ['{ "set": {"__proto__":"x"} }']],
      ['{"set":{}}', ['{ "set": {} }']],
      ['{"set":{"bad key":"x"}}', ['{ "set": {"bad key":"x"} }']],
      ['{"set":{"rack":"b 7"}}', ['{ "set": {"rack":"b 7"} }']],
      ['{"set":{"rack":7}}', ['{ "set": {"rack":7} }']],
      ['{"set":["rack"]}', ['{ "set": ["rack"] }']],
      ['{"set":null}', ['{ "set": null }']],
      ['{"set":{"drydock.dev/x":"y"}}', ['{ "set": {"drydock.dev/x":"y"} }']],
      ['{"set":{"rack":"b7"},"extra":1}', ['{ "set": {"rack":"b7"}, "extra": 1 }']],
      ['{"set":{"rack":"b7"}', ['{ "set": {"rack":"b7"}']],
      [
        JSON.stringify({ set: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }),
        [
          JSON.stringify(
            { set: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) },
            null,
            1,
          ),
        ],
      ],
    ];
    for (const [body, others] of cases) {
      const answer = await sameAnswers((id) => `/v1/nodes/${id}/label`, [body, ...others]);
      expect(answer.status, body).toBe(400);
    }
  });

  it('an id, an If-Match, a media type or a caller the route refuses is refused alike', async () => {
    const badId = [
      await call(h, 'POST', '/v1/nodes/node_nope/cordon', { body: '{}' }),
      await call(h, 'POST', '/v1/nodes/node_nope/cordon', { body: '{ }' }),
    ].map((reply) => comparable(reply, 'node_nope'));
    expect(badId[0]).toEqual(badId[1]);
    expect(badId[0]!.status).toBe(400);

    const unknown = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    const missing = [
      await call(h, 'POST', `/v1/nodes/${unknown}/label`, { body: '{"set":{"a":"b"}}' }),
      await call(h, 'POST', `/v1/nodes/${unknown}/label`, { body: '{ "set": {"a":"b"} }' }),
    ].map((reply) => comparable(reply, unknown));
    expect(missing[0]).toEqual(missing[1]);
    expect(missing[0]!.status).toBe(404);

    const refusedHeaders: Record<string, string>[] = [
      { 'if-match': '"7"' },
      { 'if-match': 'x' },
      { 'content-type': 'text/plain' },
    ];
    for (const headers of refusedHeaders) {
      const answer = await sameAnswers((id) => `/v1/nodes/${id}/cordon`, ['{}', '{ }'], { headers });
      expect(answer.status, JSON.stringify(headers)).toBeGreaterThanOrEqual(400);
    }

    const reader = await tenantKey(h, 'acme', ['compute:nodes:read'], 'bodies-reader');
    const forbidden = await sameAnswers((id) => `/v1/nodes/${id}/cordon`, ['{}', '{ }'], {
      token: reader.secret,
    });
    expect(forbidden.status).toBe(403);
  });
});

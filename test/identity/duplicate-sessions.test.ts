import { describe, expect, it } from 'vitest';
import { joinedPoolNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { signedIn, useConsole } from '../console/console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

const A = 'run-aaaaaaaa-0001';
const B = 'run-bbbbbbbb-0002';
const C = 'run-cccccccc-0003';

const beat = (credential: string, sessionId: string) =>
  call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: { sessionId } });

describe('one identity from two agent runs', () => {
  it('new runs one after another are restarts: no event, nothing changes', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-dup-restart');
    expect((await beat(credential, A)).status).toBe(200); // connects: a new version
    const before = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    for (const run of [A, B, B, C, C]) expect((await beat(credential, run)).status).toBe(200);
    expect(await eventsOf(h, nodeId, 'security.node.duplicate-session')).toEqual([]);
    const after = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    expect(after.version).toBe(before.version);
    expect(after.noScheduleReasons).toEqual([]);
  });

  it('alternating runs say duplicate-session each time; the fourth alternation quarantines it, and the console says what to do', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-dup');
    // A, B: a restart. Then B→A, A→B, B→A: three alternations, still allowed.
    for (const run of [A, B, A, B, A]) expect((await beat(credential, run)).status).toBe(200);
    const said = await eventsOf(h, nodeId, 'security.node.duplicate-session');
    expect(said).toHaveLength(3);
    const byCount = [...said].sort((x, y) => Number(x.data.alternations) - Number(y.data.alternations));
    expect(byCount.map((e) => [e.actor, e.data])).toEqual([
      ['system:identity', { sessionId: A, otherSessionId: B, alternations: 1, windowSeconds: 600 }],
      ['system:identity', { sessionId: B, otherSessionId: A, alternations: 2, windowSeconds: 600 }],
      ['system:identity', { sessionId: A, otherSessionId: B, alternations: 3, windowSeconds: 600 }],
    ]);
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}`)).body.noScheduleReasons).toEqual([]);

    // The fourth: quarantined, and this very heartbeat refused.
    const refused = await beat(credential, B);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toMatch(/quarantined.*join --reset --yes/);
    const quarantined = await eventsOf(h, nodeId, 'security.node.quarantined');
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]).toMatchObject({
      actor: 'system:identity',
      data: { sessionIds: [A, B], alternations: 4, revokedCredentials: 1 },
    });
    const node = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    expect(node.noScheduleReasons).toEqual(['quarantined']);
    expect(node.identityGeneration).toBe(2);
    // Every later call with the identity is refused, from either machine.
    for (const run of [A, B]) expect((await beat(credential, run)).status).toBe(401);
    expect((await call(h, 'GET', '/v1/agent/commands?wait=0', { token: credential })).status).toBe(401);

    const browser = await signedIn(server.base, h.operatorKey);
    const page = (await browser.get(`/console/nodes/${nodeId}`)).html;
    expect(page).toContain('data-quarantined');
    expect(page).toContain('in use on two machines at once');
    expect(page).toContain('drydock-agent join --reset --yes --token');
  });

  it('a heartbeat without a session id (an older agent) is counted nowhere', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-dup-old');
    for (let i = 0; i < 3; i++) {
      expect((await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body: {} })).status).toBe(
        200,
      );
    }
    expect(await eventsOf(h, nodeId, 'security.node.duplicate-session')).toEqual([]);
  });

  it('refuses a malformed session id in the error envelope', async () => {
    const { credential } = await joinedPoolNode(h, 'pool-dup-bad');
    for (const sessionId of ['short', 'x'.repeat(65), 'has space in it', '<script>x</script>']) {
      const reply = await beat(credential, sessionId);
      expect(reply.status, sessionId).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
  });
});

import { describe, expect, it } from 'vitest';
import { seedPoolNode } from './support/builders';
import { line, useCli } from './support/cli';
import { allocate, call, eventsOf } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();
const cli = useCli(h);
const { drydock } = cli;

describe('drydock operations cancel', () => {
  it('cancels a drain, saying by whom; again answers the same; a finished one is exit 3', async () => {
    const nodeId = await seedPoolNode(h, 'pool-cli-cancel');
    await allocate(h, nodeId, 'acme');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    const opId = started.body.operation.id as string;

    const cancelled = await drydock(line('operations cancel', opId, { reason: 'wrong node' }));
    expect(cancelled).toMatchObject({ code: 0, stderr: '' });
    expect(cancelled.stdout).toBe(`cancelled ${opId} (drain of ${nodeId}) by key:bootstrap-operator\n`);

    const again = await drydock(line('operations cancel', opId, { json: true }));
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(again.stdout)).toMatchObject({
      id: opId,
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator', reason: 'wrong node' },
    });
    expect(await eventsOf(h, nodeId, 'node.drain.cancelled')).toHaveLength(1);

    const empty = await seedPoolNode(h, 'pool-cli-cancel');
    const drained = await call(h, 'POST', `/v1/nodes/${empty}/drain`);
    const done = drained.body.operation.id as string;
    await eventually(
      async () => (await call(h, 'GET', `/v1/operations/${done}`)).body.status === 'succeeded',
    );
    const refused = await drydock(line('operations cancel', done));
    expect(refused).toMatchObject({ code: 3, stdout: '' });
    expect(refused.stderr).toMatch(/^error: INVALID_STATE: operation .* already succeeded/);
  });

  it('refuses a --children that is neither finish nor cancel before any request', async () => {
    await cli.refuses([
      [
        ['operations', 'cancel', 'op_01k5w8v3x9q2m4n6p8r0s2t4v6', '--children', 'later'],
        "--children must be one of finish, cancel; got 'later'",
      ],
    ]);
  });
});

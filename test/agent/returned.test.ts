import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { nodeCommands } from '../../db/schema';
import { joinedNode } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

/** A command of `nodeId` written straight into its stream, as a remediation attempt queues one. */
async function command(
  nodeId: string,
  values: { kind?: 'remediate' | 'purge'; status?: 'pending' | 'acked' | 'refused' } = {},
) {
  const id = newId('cmd');
  await h.db.insert(nodeCommands).values({
    id,
    nodeId,
    kind: values.kind ?? 'remediate',
    action: 'reboot',
    status: values.status ?? 'acked',
    data: { attempt: 2, condition: 'GpuXidError' },
    operationId: 'op_remediation-of-this-node',
  });
  return id;
}

const returned = (credential: string, id: string) =>
  call(h, 'POST', `/v1/agent/commands/${id}/returned`, { token: credential, body: {} });

describe('POST /v1/agent/commands/{id}/returned', () => {
  it('records node.remediation.returned once: a second report answers the first and appends nothing', async () => {
    await seedPool(h, { id: 'pool-returned', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-returned');
    const id = await command(nodeId);

    const first = await returned(credential, id);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id, kind: 'remediate', action: 'reboot', status: 'acked' });
    expect(Date.parse(first.body.returnedAt)).not.toBeNaN();
    const events = await eventsOf(h, nodeId, 'node.remediation.returned');
    expect(events).toMatchObject([
      {
        actor: `node:${nodeId}`,
        operationId: 'op_remediation-of-this-node',
        data: { commandId: id, action: 'reboot', attempt: 2 },
      },
    ]);

    const again = await returned(credential, id);
    expect(again.status).toBe(200);
    expect(again.body.returnedAt).toBe(first.body.returnedAt);
    expect(await eventsOf(h, nodeId, 'node.remediation.returned')).toHaveLength(1);
    const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id));
    expect(row).toMatchObject({ status: 'acked', data: { attempt: 2, condition: 'GpuXidError' } });
  });

  it('only for an acked remediate command: pending, refused or a purge are INVALID_STATE; another node’s is NOT_FOUND; nothing recorded', async () => {
    await seedPool(h, { id: 'pool-returned-bad', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-returned-bad');
    const other = await joinedNode(h, 'pool-returned-bad');
    const pending = await command(nodeId, { status: 'pending' });
    const refused = await command(nodeId, { status: 'refused' });
    const purge = await command(nodeId, { kind: 'purge' });
    const othersCommand = await command(other.nodeId);

    const cases: [string, number, string, string][] = [
      [pending, 409, 'INVALID_STATE', `command ${pending} is pending, not acked`],
      [refused, 409, 'INVALID_STATE', `command ${refused} is refused, not acked`],
      [purge, 409, 'INVALID_STATE', `command ${purge} is a purge command, not remediate`],
      [othersCommand, 404, 'NOT_FOUND', `command ${othersCommand} not found`],
      [newId('cmd'), 404, 'NOT_FOUND', 'not found'],
    ];
    for (const [id, status, code, message] of cases) {
      const reply = await returned(credential, id);
      expect(reply.status, id).toBe(status);
      expect(reply.body.error).toMatchObject({ code });
      expect(reply.body.error.message).toContain(message);
    }
    expect((await returned(credential, pending)).body.error.details).toMatchObject({ status: 'pending' });
    expect(await eventsOf(h, nodeId, 'node.remediation.returned')).toEqual([]);
    expect(await eventsOf(h, other.nodeId, 'node.remediation.returned')).toEqual([]);
    const [row] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, othersCommand));
    expect(row!.data).toEqual({ attempt: 2, condition: 'GpuXidError' });
  });
});

import { describe, expect, it } from 'vitest';
import { maintenanceWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { call, seedPool } from '../support/fixtures';
import { agentOf } from '../support/remediation';
import { useHarness } from '../support/harness';
import { nodeOutcome, useStepFaults, type Flow } from '../support/step-faults';

// No in-process worker: each run starts a worker child process that kills itself after step N.
const h = useHarness({ worker: false });
const faults = useStepFaults(h);

const ACTIONS = [
  { name: 'diagnostics', params: {}, timeoutSeconds: 60, restarts: false },
  { name: 'reboot', params: {}, timeoutSeconds: 300, restarts: true },
];
const facts = (api: typeof h, credential: string, bootId: string) =>
  call(api, 'PUT', '/v1/agent/facts', {
    token: credential,
    body: { bootId, bootedAt: new Date().toISOString(), actions: ACTIONS },
  });

/**
 * A node's maintenance (drain, run diagnostics, reboot, uncordon) that an agent driven by hand
 * carries out: it starts each command once the maintenance queued it, reports its end, and comes
 * back on a new boot once the reboot was asked. Driven by what the node is sent, not by counts of
 * steps: a look retried after a kill may take two steps' ground at once (the drain ended while no
 * worker ran), so the same action may come a step earlier; the outcome may not differ.
 */
const maintenanceFlow: Flow<{ nodeId: string; credential: string }> = {
  async setup(api) {
    await seedPool(api, { id: api.taskQueue, tenantId: 'acme', kind: 'provider' });
    const node = await joinedNode(api, api.taskQueue);
    const said = await call(api, 'PUT', '/v1/agent/facts', {
      token: node.credential,
      body: {
        bootId: 'b0000000-0000-4000-8000-000000000001',
        bootedAt: new Date().toISOString(),
        actions: ACTIONS,
      },
    });
    expect(said.status).toBe(200);
    // A session: the node counts as connected.
    await call(api, 'POST', '/v1/agent/heartbeat', { token: node.credential, body: {} });
    return node;
  },
  workflowId: ({ nodeId }) => maintenanceWorkflowId(nodeId),
  async drive(api, { nodeId, credential }) {
    const agent = agentOf(api, credential);
    const asked = await call(api, 'POST', `/v1/nodes/${nodeId}/maintenances`, {
      body: {
        reason: 'kernel update',
        steps: [
          { kind: 'drain' },
          { kind: 'run', action: 'diagnostics' },
          { kind: 'reboot' },
          { kind: 'uncordon' },
        ],
      },
    });
    expect(asked.status).toBe(202);
    const run = await agent.nextCommand('diagnostics');
    const report = (path: string, body: unknown) =>
      call(api, 'POST', `/v1/agent/commands/${run!.id}/${path}`, { token: credential, body });
    expect((await report('start', {})).status).toBe(200);
    const ok = { status: 'succeeded', exitCode: 0, stdout: 'b2s=', stderr: '', droppedBytes: 0 };
    expect((await report('result', ok)).status).toBe(200);
    const reboot = await agent.nextCommand('reboot');
    expect(
      (await call(api, 'POST', `/v1/agent/commands/${reboot!.id}/start`, { token: credential, body: {} }))
        .status,
    ).toBe(200);
    // Back on a new boot once the reboot was asked (its step noted the boot before with it).
    expect((await facts(api, credential, 'b0000000-0000-4000-8000-000000000002')).status).toBe(200);
  },
  outcome: (api, { nodeId }) => nodeOutcome(api, nodeId),
};

describe('maintenance with its worker killed at every step boundary', () => {
  it('drain, run, reboot, uncordon: each step once, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary('maintenance', maintenanceFlow);
    // One look a step of the plan at least; how many more depends on which wake-ups coalesced.
    expect(new Set(clean.steps)).toEqual(new Set(['lookAtMaintenance']));
    expect(clean.steps.length).toBeGreaterThanOrEqual(4);
    expect(clean.result).toBe('succeeded');
    expect(clean.outcome).toMatchObject({
      events: {
        'node.maintenance.started': 1,
        'node.maintenance.step-ended': 4,
        'node.maintenance.succeeded': 1,
        'node.draining': 1,
        'node.drained': 1,
        'node.command.requested': 2,
        'node.command.started': 2,
        'node.command.succeeded': 1,
        'node.booted': 2,
        'node.uncordoned': 1,
      },
      operations: [
        { kind: 'maintenance', status: 'succeeded' },
        { kind: 'drain', status: 'succeeded' },
      ],
      commands: [
        { kind: 'run', status: 'succeeded' },
        { kind: 'run', status: 'running' },
      ],
      node: { cordoned: false, maintenance: false },
    });
  }, 300_000);
});

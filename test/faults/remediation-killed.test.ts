import { describe, expect, it } from 'vitest';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { agentOf } from '../support/remediation';
import { nodeOutcome, useStepFaults, type Flow } from '../support/step-faults';

// No in-process worker: each run starts a worker child process that kills itself after step N.
const h = useHarness({ worker: false });
const faults = useStepFaults(h);

type Reported = { nodeId: string; credential: string };

/**
 * The agent reports a GPU fault (that starts the remediation), and answers the first rung's
 * command once the remediation waits on it; `answer` is what it does then.
 */
function remediationFlow(
  answer: (
    agent: ReturnType<typeof agentOf>,
    commandId: string,
    learned: (n: number) => Promise<void>,
  ) => Promise<void>,
): Flow<Reported> {
  return {
    async setup(api) {
      await seedPool(api, {
        id: api.taskQueue,
        tenantId: 'acme',
        kind: 'provider',
        policy: { maxUnhealthy: 5 },
      });
      return joinedNode(api, api.taskQueue);
    },
    workflowId: ({ nodeId }) => remediationWorkflowId(nodeId),
    async drive(api, { credential }, learned) {
      const agent = agentOf(api, credential);
      // The report records the condition and its remediation in one transaction (200).
      expect((await agent.report('GpuXidError', true)).status).toBe(200);
      await learned(3); // the begin, the first rung's command, a check that found it unanswered
      const [command] = await agent.commands();
      await answer(agent, command!.id, learned);
    },
    outcome: (api, { nodeId }) => nodeOutcome(api, nodeId),
  };
}

describe('remediation with its worker killed at every step boundary', () => {
  it('acked, then cleared: succeeds once, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary(
      'remediation',
      remediationFlow(async (agent, commandId, learned) => {
        expect((await agent.ack(commandId)).status).toBe(200);
        await learned(4); // a check that saw the ack, the condition still true
        expect((await agent.report('GpuXidError', false)).status).toBe(200);
      }),
    );
    expect(clean.steps).toEqual([
      'beginRemediation',
      'startAttempt',
      'checkAttempt',
      'checkAttempt',
      'checkAttempt',
      'succeedRemediation',
    ]);
    expect(clean.result).toBe('succeeded');
    expect(clean.outcome).toMatchObject({
      events: { 'node.remediation.attempted': 1, 'node.remediation.succeeded': 1 },
      operations: [{ kind: 'remediation', status: 'succeeded' }],
      commands: [{ kind: 'remediate', status: 'acked' }],
      node: { maintenance: false, noScheduleReasons: [] },
    });
  }, 240_000);

  it('both rungs refused by the node: climbs, then escalates to maintenance once, whichever step the worker died after', async () => {
    const clean = await faults.everyStepBoundary(
      'remediation-refused',
      remediationFlow(async (agent, commandId, learned) => {
        expect((await agent.refuse(commandId, 'no spare GPU')).status).toBe(200);
        // The refusal seen, the next rung sent, and a check that found it unanswered.
        await learned(6);
        const [reboot] = await agent.commands();
        expect(reboot).toMatchObject({ action: 'reboot' });
        expect((await agent.refuse(reboot!.id, 'reboot inhibited')).status).toBe(200);
      }),
    );
    expect(clean.steps).toEqual([
      'beginRemediation',
      'startAttempt',
      'checkAttempt',
      'checkAttempt',
      'startAttempt',
      'checkAttempt',
      'checkAttempt',
      'escalateRemediation',
    ]);
    expect(clean.result).toBe('escalated');
    expect(clean.outcome).toMatchObject({
      events: { 'node.remediation.attempted': 2, 'node.remediation.escalated': 1 },
      operations: [{ kind: 'remediation', status: 'failed' }],
      commands: [
        { kind: 'remediate', status: 'refused' },
        { kind: 'remediate', status: 'refused' },
      ],
      node: { maintenance: true },
    });
  }, 240_000);
});

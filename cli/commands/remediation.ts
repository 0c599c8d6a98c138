import { CONDITION_TYPE } from '../../domain/remediation';
import { defineCommand, type Command } from '../command';
import type { Operation } from '../views/operations';
import { reportFinished, waitForOperation } from '../wait';
import { nodeName } from '../views/nodes';
import { idempotencyKeyFlag, mutationFlags, reasonFlag, timeoutFlag, waitFlag } from './flags';

/**
 * Health remediation (docs/lifecycle/remediation.md): start one for a condition, reported by the
 * node or, when it has not reported it, recorded as reported by the operator; clear a condition
 * by hand.
 */

interface Attempt {
  attempt: number;
  action: string;
  outcome: string | null;
  refuseReason?: string | null;
}

/** A finished remediation's attempts, one line each: `attempt 1 reset-accelerator: refused (…)`. */
function attemptLines(op: Operation): string[] {
  const recorded = (op.status === 'succeeded' ? op.result : op.error) as { attempts?: Attempt[] } | null;
  return (recorded?.attempts ?? []).map(
    (a) =>
      `  attempt ${a.attempt} ${a.action}: ${a.outcome ?? 'unfinished'}${a.refuseReason ? ` (${a.refuseReason})` : ''}`,
  );
}

const remediate = defineCommand({
  words: ['nodes', 'remediate'],
  summary: 'Remediate a condition, reported by the node or not: its ladder, then maintenance if it stays',
  operands: [{ name: 'NODE', type: 'node' }],
  flags: {
    condition: {
      type: 'string',
      value: 'TYPE',
      required: true,
      pattern: CONDITION_TYPE,
      patternHint: 'a condition type such as GpuXidError',
      help: 'the condition to remediate (e.g. GpuXidError); one the node has not reported is recorded as reported by you',
    },
    reason: reasonFlag,
    'idempotency-key': idempotencyKeyFlag,
    wait: waitFlag,
    timeout: timeoutFlag,
  },
  async run({ api, out, args, flags }) {
    const { operation } = await api.POST('/v1/nodes/{id}/remediations', {
      params: { path: { id: args.NODE }, header: { 'idempotency-key': flags['idempotency-key'] } },
      body: { condition: flags.condition, reason: flags.reason },
    });
    if (!flags.wait) {
      out.result({ operation }, () => `${args.NODE}: remediation ${operation.id} ${operation.status}`);
      return;
    }
    if (!out.json) out.note(`${args.NODE}: remediation ${operation.id} ${operation.status}; waiting`);
    const finished = await waitForOperation(api, out, operation, flags.timeout);
    for (const line of attemptLines(finished)) out.human(line);
    return reportFinished(out, finished);
  },
});

const clearCondition = defineCommand({
  words: ['nodes', 'clear-condition'],
  summary: 'Clear a true condition by hand: false, its NoSchedule reason gone, its remediation told',
  operands: [
    { name: 'NODE', type: 'node' },
    { name: 'TYPE', type: 'condition' },
  ],
  flags: { ...mutationFlags, reason: { ...reasonFlag, required: true } },
  async run({ api, out, args, flags }) {
    const node = await api.POST('/v1/nodes/{id}/conditions/{type}/clear', {
      params: { path: { id: args.NODE, type: args.TYPE } },
      body: { reason: flags.reason, version: flags['if-version'] },
    });
    out.result(node, () => `${nodeName(node)}: ${args.TYPE} cleared, version ${node.version}`);
  },
});

export const remediationCommands: Command[] = [remediate, clearCondition];

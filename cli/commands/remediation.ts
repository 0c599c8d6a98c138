import { CONDITION_TYPE } from '../../domain/remediation';
import { defineCommand, type Command } from '../command';
import { reportFinished, waitForOperation } from '../wait';
import { idempotencyKeyFlag, reasonFlag, timeoutFlag, waitFlag } from './flags';

/** Health remediation (docs/lifecycle/remediation.md): start one for a condition the node reports. */

const remediate = defineCommand({
  words: ['nodes', 'remediate'],
  summary: 'Remediate a condition the node reports: its ladder of actions, then maintenance if it stays',
  operands: [{ name: 'NODE', type: 'node' }],
  flags: {
    condition: {
      type: 'string',
      value: 'TYPE',
      required: true,
      pattern: CONDITION_TYPE,
      patternHint: 'a condition type such as GpuXidError',
      help: 'the condition to remediate, as the node reports it (e.g. GpuXidError)',
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
    return reportFinished(out, await waitForOperation(api, out, operation, flags.timeout));
  },
});

export const remediationCommands: Command[] = [remediate];

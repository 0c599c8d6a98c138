import { progressInWords } from '../../domain/progress';
import { defineCommand, type Command } from '../command';
import { cancelled, operationDetails } from '../views/operations';
import { reportFinished, waitForOperation } from '../wait';
import { reasonFlag, timeoutFlag, waitFlag } from './flags';

const show = defineCommand({
  words: ['operations', 'show'],
  summary: 'Show an operation and its progress',
  operands: [{ name: 'OP', type: 'op' }],
  flags: { wait: waitFlag, timeout: timeoutFlag },
  async run({ api, out, args, flags }) {
    const op = await api.GET('/v1/operations/{id}', { params: { path: { id: args.OP } } });
    if (!flags.wait) {
      out.result(op, () => operationDetails(op));
      return;
    }
    return reportFinished(out, await waitForOperation(api, out, op, flags.timeout));
  },
});

const cancel = defineCommand({
  words: ['operations', 'cancel'],
  summary: 'Cancel an operation (operator): the node is put back as its kind needs, at once',
  operands: [{ name: 'OP', type: 'op' }],
  flags: {
    reason: reasonFlag,
    children: {
      type: 'string',
      value: 'WHAT',
      choices: ['finish', 'cancel'],
      help: 'pool drains and rolling maintenances only: leave the node operations already running to finish (default), or cancel them',
    },
  },
  async run({ api, out, args, flags }) {
    const op = await api.DELETE('/v1/operations/{id}', {
      params: { path: { id: args.OP } },
      body: {
        ...(flags.reason === undefined ? {} : { reason: flags.reason }),
        ...(flags.children === undefined ? {} : { children: flags.children as 'finish' | 'cancel' }),
      },
    });
    out.result(op, () => cancelled(op));
  },
});

const resume = defineCommand({
  words: ['operations', 'resume'],
  summary: 'Resume a rolling maintenance paused at its maxFailures (operator): the next nodes start',
  operands: [{ name: 'OP', type: 'op' }],
  flags: { reason: reasonFlag },
  async run({ api, out, args, flags }) {
    const op = await api.POST('/v1/operations/{id}/resume', {
      params: { path: { id: args.OP } },
      body: flags.reason === undefined ? {} : { reason: flags.reason },
    });
    out.result(op, () => `${op.kind} ${op.id} resumed: ${progressInWords(op.progress)}`);
  },
});

export const operationCommands: Command[] = [show, cancel, resume];

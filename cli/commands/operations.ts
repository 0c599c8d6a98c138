import { defineCommand, type Command } from '../command';
import { operationDetails } from '../views/operations';
import { reportFinished, waitForOperation } from '../wait';
import { timeoutFlag, waitFlag } from './flags';

const show = defineCommand({
  words: ['operations', 'show'],
  summary: 'Show an operation and, while it runs, its progress',
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

export const operationCommands: Command[] = [show];

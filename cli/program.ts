import type { Program } from '../cli-kit/spec';
import type { Command } from './command';
import { commands } from './commands';
import { GLOBAL_FLAGS } from './globals';

/** `drydock`: its commands and global flags, read by the parser, the help and docs/cli.md. */
export const drydock: Program<Command, typeof GLOBAL_FLAGS> = {
  name: 'drydock',
  about: 'the command line of the Drydock API',
  firstWord: 'command group',
  globals: GLOBAL_FLAGS,
  commands,
  // What cli/errors.ts exitCodeOf maps the API's error codes to.
  exitCodes: [
    [0, 'success'],
    [1, 'other failure'],
    [2, 'usage error (nothing sent)'],
    [3, 'CONFLICT/INVALID_STATE/NOT_SCHEDULABLE'],
    [4, 'NOT_FOUND'],
    [5, 'UNAUTHENTICATED/FORBIDDEN'],
  ],
  usageLabel: 'usage: ',
};

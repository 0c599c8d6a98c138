import type { FlagSpecs, Program } from '../cli-kit/spec';
import type { WordCommand } from '../cli-kit/word-command';
import { joinCommand } from './join-command';
import { runCommand } from './run-command';
import { stopCommand } from './stop-command';

/** Flags every command takes; before the command, only these may come. */
const GLOBAL_FLAGS = {
  json: { type: 'boolean', help: 'machine output: JSON on stdout, JSON log lines on stderr' },
  help: { type: 'boolean', help: 'show help' },
} as const satisfies FlagSpecs;

/** `drydock-agent`: its commands and global flags, read by the parser, the help and docs/cli.md. */
export const drydockAgent: Program<WordCommand, typeof GLOBAL_FLAGS> = {
  name: 'drydock-agent',
  about: 'the Drydock node agent',
  firstWord: 'command',
  globals: GLOBAL_FLAGS,
  commands: [joinCommand, runCommand, stopCommand],
  exitCodes: [
    [0, 'ok'],
    [1, 'failed'],
    [2, 'usage'],
    [3, 'the node identity is no longer valid'],
  ],
  usageLabel: '',
};

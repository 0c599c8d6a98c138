import type { FlagSpecs, Program } from '../cli-kit/spec';
import type { WordCommand } from '../cli-kit/word-command';
import { kubernetesCommand } from './kubernetes/command';
import { slurmCommand } from './slurm/command';

const GLOBAL_FLAGS = {
  json: { type: 'boolean', help: 'log lines as JSON objects on stderr' },
  help: { type: 'boolean', help: 'show help' },
} as const satisfies FlagSpecs;

/** `drydock-bridge`: one command per scheduler; read by the parser, the help and docs/cli.md. */
export const drydockBridge: Program<WordCommand, typeof GLOBAL_FLAGS> = {
  name: 'drydock-bridge',
  about: "keeps a scheduler's nodes and work in step with Drydock",
  firstWord: 'scheduler',
  globals: GLOBAL_FLAGS,
  commands: [slurmCommand, kubernetesCommand],
  exitCodes: [
    [0, 'stopped (SIGTERM or SIGINT)'],
    [1, 'failed'],
    [2, 'usage'],
  ],
  usageLabel: '',
};

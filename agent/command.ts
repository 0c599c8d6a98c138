import { urlFlag } from '../cli-kit/flags';
import type { Io } from '../cli-kit/run';
import type { CommandDef, Env, FlagSpec, FlagSpecs, FlagValues } from '../cli-kit/spec';

/** What an agent command's handler gets: its checked flags, where to write, the environment. */
export interface AgentContext<F extends FlagSpecs> {
  flags: FlagValues<F>;
  /** `--json`: machine output, JSON on stdout and JSON log lines on stderr. */
  json: boolean;
  io: Io;
  env: Env;
}

export interface AgentCommandSpec<F extends FlagSpecs> extends CommandDef<F, readonly []> {
  words: readonly [string];
  /** Resolves to the exit code. */
  run(ctx: AgentContext<F>): Promise<number>;
}

export type AgentCommand = AgentCommandSpec<FlagSpecs>;

/** A command for the table in `program.ts`; keeps its handler's flags typed. */
export function defineAgentCommand<const F extends FlagSpecs>(spec: AgentCommandSpec<F>): AgentCommand {
  return spec as unknown as AgentCommand;
}

export const dataDirFlag = {
  type: 'string',
  value: 'DIR',
  help: 'the data directory (identity.json, node.key, journal.jsonl)',
  required: true,
} as const satisfies FlagSpec;

/** `run` and `stop` talk to the API the node joined unless told another. */
export const joinedApiFlag = {
  ...urlFlag('the Drydock API'),
  default: 'the one joined',
} as const satisfies FlagSpec;

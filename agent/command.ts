import { urlFlag } from '../cli-kit/flags';
import type { FlagSpec } from '../cli-kit/spec';

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

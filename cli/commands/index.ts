import type { Command } from '../command';
import { nodeControlCommands } from './node-controls';
import { nodeCommands } from './nodes';
import { operationCommands } from './operations';
import { poolCommands } from './pools';

/** Every command, in the order help lists them; a new group is one more module here. */
export const commands: readonly Command[] = [
  ...nodeCommands,
  ...nodeControlCommands,
  ...poolCommands,
  ...operationCommands,
];

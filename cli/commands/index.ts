import type { Command } from '../command';
import { nodeCommands } from './nodes';
import { operationCommands } from './operations';

/** Every command, in the order help lists them; a new group is one more module here. */
export const commands: readonly Command[] = [...nodeCommands, ...operationCommands];

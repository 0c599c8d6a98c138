import type { Command } from '../command';
import { allocationCommands } from './allocations';
import { artifactCommands } from './artifacts';
import { auditCommands } from './audit';
import { caCommands } from './ca';
import { commandCommands } from './commands';
import { decommissionCommands } from './decommission';
import { eventCommands } from './events';
import { keyCommands } from './keys';
import { maintenanceCommands } from './maintenance';
import { migrateCommands } from './migrate';
import { nodeAccessCommands } from './node-access';
import { nodeControlCommands } from './node-controls';
import { nodeCommands } from './nodes';
import { operationCommands } from './operations';
import { poolCommands } from './pools';
import { remediationCommands } from './remediation';
import { signInCommands } from './sign-in';
import { sshCommands } from './ssh';
import { tokenCommands } from './tokens';

/** Every command, in the order help lists them; a new group is one more module here. */
export const commands: readonly Command[] = [
  ...signInCommands,
  ...nodeCommands,
  ...nodeControlCommands,
  ...nodeAccessCommands,
  ...eventCommands,
  ...auditCommands,
  ...remediationCommands,
  ...commandCommands,
  ...sshCommands,
  ...maintenanceCommands,
  ...allocationCommands,
  ...artifactCommands,
  ...poolCommands,
  ...decommissionCommands,
  ...tokenCommands,
  ...keyCommands,
  ...operationCommands,
  ...migrateCommands,
  ...caCommands,
];

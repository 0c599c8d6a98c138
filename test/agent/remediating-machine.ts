import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { PoolPolicy } from '../../db/schema';
import { seedPool } from '../support/fixtures';
import { eventually, type Harness } from '../support/harness';
import { remediateCommands } from '../support/remediation';
import { writeScript } from '../support/scripts';
import { joinedMachine, runMachine, type AgentBench, type Machine, type RunningAgent } from './agent-process';

/**
 * A machine whose real `drydock-agent` remediates: joined through the binary into a pool that lets
 * it remediate (no storm), with its scripts and agent config written beside its data directory.
 */
export async function remediatingMachine(
  h: Harness,
  bench: AgentBench,
  poolId: string,
  policy: PoolPolicy = {},
): Promise<Machine> {
  await seedPool(h, {
    id: poolId,
    tenantId: 'acme',
    kind: 'provider',
    policy: { maxUnhealthy: 5, ...policy },
  });
  return joinedMachine(h, bench, poolId);
}

/** Writes an executable shell script `name` beside the machine's data directory; its path. */
export const machineScript = (m: Machine, name: string, body: string) =>
  writeScript(join(dirname(m.dir), name), body);

/** Writes the agent config (YAML) beside the machine's data directory; its path. */
export function machineConfig(m: Machine, yaml: string): string {
  const path = join(dirname(m.dir), 'agent.yaml');
  writeFileSync(path, yaml);
  return path;
}

/** `drydock-agent run --config FILE` with a fast heartbeat, once it is connected. */
export const runWithConfig = (bench: AgentBench, m: Machine, configFile: string): Promise<RunningAgent> =>
  runMachine(bench, m, m.dir, ['--config', configFile]);

/** The node's first `count` remediate commands, once every one of them is answered. */
export function answeredCommands(h: Harness, nodeId: string, count: number) {
  return eventually(async () => {
    const commands = (await remediateCommands(h, nodeId)).slice(0, count);
    return commands.length === count && commands.every((c) => c.status !== 'pending') ? commands : undefined;
  }, 30_000);
}

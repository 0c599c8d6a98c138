import { createSimulator, type Simulator, type SimulatorOptions } from '../../agent/simulator';
import { closeServer, listen } from '../../api/server';
import { createToken } from './agents';
import { readNode } from './builders';
import { seedPool } from './fixtures';
import { eventually, type Harness } from './harness';

/** Simulated agents joined into a pool of their own, each one's session begun (its boot said). */
export interface SimulatedFleet {
  simulator: Simulator;
  nodes: string[];
  close(): Promise<void>;
}

/**
 * `count` simulated agents (agent/simulator.ts) joined with a token into pool `poolId` (made for
 * tenant acme), against `api` or an API this starts on a free port; resolves once every node's
 * agent said its boot, so commands and maintenances find it connected.
 */
export async function simulatedFleet(
  h: Harness,
  options: { poolId: string; count: number; api?: string } & Partial<SimulatorOptions>,
): Promise<SimulatedFleet> {
  const { poolId, count, api, ...rest } = options;
  await seedPool(h, { id: poolId, tenantId: 'acme', kind: 'provider' });
  const token = await createToken(h, { poolId });
  const listening = api ? null : await listen(h.deps, 0);
  const simulator = await createSimulator({
    api: api ?? `http://127.0.0.1:${listening!.port}`,
    token: token.secret,
    count,
    heartbeatEveryMs: 300,
    pollWaitSeconds: 2,
    ...rest,
  });
  const nodes = simulator.agents.map((a) => a.nodeId);
  for (const nodeId of nodes)
    await eventually(async () => ((await readNode(h, nodeId)).bootId ? true : undefined));
  return {
    simulator,
    nodes,
    async close() {
      await simulator.close();
      if (listening) await closeServer(listening.server);
    },
  };
}

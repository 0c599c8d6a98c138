import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { count } from 'drizzle-orm';
import { dataFiles } from '../agent/identity';
import { createSimulator, type SimulatedMachine, type Simulator } from '../agent/simulator';
import type { Db } from '../db/client';
import { pools } from '../db/schema';

const HOUR = 3_600_000;

/** The demo fleet `npm start` seeds: which pool gets how many machines, and their accelerators. */
const PLAN = [
  { pool: 'pool-h100-east', tenant: 'acme', prefix: 'gpu-b7', gpu: 'H100', count: 5 },
  { pool: 'pool-a100-cloud', tenant: 'globex', prefix: 'a100', gpu: 'A100', count: 4 },
  { pool: 'pool-vps-fra', tenant: 'acme', prefix: 'vps', gpu: 'L4', count: 3 },
];

/** Creates the demo's pools when the database holds none; true when it did (a fresh demo). */
export async function seedDemoPools(db: Db): Promise<boolean> {
  const [existing] = await db.select({ n: count() }).from(pools);
  if ((existing?.n ?? 0) > 0) return false;
  await db.insert(pools).values([
    {
      id: 'pool-h100-east',
      kind: 'bare-metal',
      siteId: 'fra1',
      tenantId: 'acme',
      policy: { maxUnavailable: 2 },
    },
    {
      id: 'pool-a100-cloud',
      kind: 'provider',
      siteId: 'ams2',
      tenantId: 'globex',
      policy: { lostAfter: '10m', maxUnhealthy: '40%' },
    },
    {
      id: 'pool-vps-fra',
      kind: 'vps-host',
      siteId: 'fra1',
      tenantId: 'acme',
      grants: ['globex'],
      policy: {},
    },
  ]);
  return true;
}

/** Calls the API with the operator key; throws with the API's answer on anything but 2xx. */
async function operatorCall<T>(
  api: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/**
 * The demo machines, each with a join token made through the API: one token per pool and rack,
 * so the `rack` label comes with the join, as an operator would set it up.
 */
async function demoMachines(api: string, operatorKey: string): Promise<SimulatedMachine[]> {
  const machines: SimulatedMachine[] = [];
  for (const group of PLAN) {
    const tokens = new Map<string, string>();
    for (const rack of ['r1', 'r2']) {
      const token = await operatorCall<{ secret: string }>(api, operatorKey, 'POST', '/v1/tokens', {
        poolId: group.pool,
        ttl: '1h',
        maxUses: Math.ceil(group.count / 2),
        labels: { rack },
        description: `demo fleet: ${group.pool} rack ${rack}`,
      });
      tokens.set(rack, token.secret);
    }
    for (let i = 1; i <= group.count; i++) {
      const hostname = `${group.prefix}-${String(i).padStart(2, '0')}`;
      machines.push({
        hostname,
        displayName: hostname.toUpperCase(),
        token: tokens.get(`r${(i % 2) + 1}`),
        inventory: {
          accelerators: Array.from({ length: 8 }, (_, g) => ({
            model: group.gpu,
            serial: `${hostname}-gpu${g}`,
          })),
          storageRoots: [
            { path: '/var/lib/drydock', bytes: 3_840_000_000_000 },
            { path: '/scratch', bytes: 15_360_000_000_000 },
          ],
        },
      });
    }
  }
  return machines;
}

/** Machines whose identities an earlier start stored under `dataRoot`. */
function storedMachines(dataRoot: string): SimulatedMachine[] {
  if (!existsSync(dataRoot)) return [];
  return readdirSync(dataRoot)
    .filter((hostname) => existsSync(dataFiles(join(dataRoot, hostname)).identity))
    .sort()
    .map((hostname) => ({ hostname }));
}

export interface DemoFleet {
  simulator: Simulator;
  /** A fresh demo's drain of its first machine, to send once workflows run; null on a later start. */
  startDrain: (() => Promise<void>) | null;
}

/**
 * Runs the demo fleet as simulated agents that join through the API and keep heartbeating while
 * `npm start` runs. On an empty database: pools, join tokens, a dozen joins, live allocations of
 * various end times, and `startDrain` for one running drain. Later starts reuse the identities
 * stored under `<home>/demo-agents/<hostname>/` (the agent's data-directory format) and join nothing.
 */
export async function startDemoFleet(input: {
  db: Db;
  api: string;
  operatorKey: string;
  home: string;
  log: (line: string) => void;
}): Promise<DemoFleet> {
  const { api, operatorKey, log } = input;
  const dataRoot = resolve(input.home, 'demo-agents');
  const fresh = await seedDemoPools(input.db);
  // Identities stored for a database that is gone would only be refused.
  if (fresh) rmSync(dataRoot, { recursive: true, force: true });
  const machines = fresh ? await demoMachines(api, operatorKey) : storedMachines(dataRoot);
  const simulator = await createSimulator({
    api,
    machines,
    dataRoot,
    log: (level, message, fields) => {
      if (level !== 'info') log(`demo agent ${String(fields?.hostname ?? '')}: ${message}`);
    },
  });
  if (!fresh) {
    log(`demo fleet: ${simulator.agents.length} simulated agents heartbeating`);
    return { simulator, startDrain: null };
  }

  const planOf = new Map<string, { tenantId: string; i: number }>(
    PLAN.flatMap((group) =>
      Array.from({ length: group.count }, (_, k) => {
        const i = k + 1;
        return [`${group.prefix}-${String(i).padStart(2, '0')}`, { tenantId: group.tenant, i }] as [
          string,
          { tenantId: string; i: number },
        ];
      }),
    ),
  );
  const now = Date.now();
  try {
    for (const agent of simulator.agents) {
      const { tenantId, i } = planOf.get(agent.hostname)!;
      // Allocations ending in 1–3 hours, plus one open-ended lease on every other node.
      for (const hours of [1, 2, 3].slice(0, (i % 3) + 1)) {
        await operatorCall(api, operatorKey, 'POST', '/v1/allocations', {
          nodeId: agent.nodeId,
          tenantId,
          kind: 'job',
          endsAt: new Date(now + hours * HOUR).toISOString(),
        });
      }
      if (i % 2 === 0) {
        await operatorCall(api, operatorKey, 'POST', '/v1/allocations', {
          nodeId: agent.nodeId,
          tenantId,
          kind: 'lease',
        });
      }
    }
  } catch (error) {
    log(`demo allocations failed: ${(error as Error).message}`);
  }
  log(`seeded the demo fleet: ${simulator.agents.length} simulated agents joined through the API`);
  // One drain through the real path, so the Temporal UI has something to show at once.
  const first = simulator.agents[0]!;
  const startDrain = async () => {
    const drain = await fetch(`${api}/v1/nodes/${first.nodeId}/drain`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'demo: replace PSU' }),
    });
    log(`demo: drain of ${first.hostname} (${first.nodeId}): HTTP ${drain.status}`);
  };
  return { simulator, startDrain };
}

/**
 * console-render: how long the API process takes to answer each console page, request to last
 * byte, with a fleet of N nodes (issue 36: every page's server render p95 ≤ 100 ms at 1,000 nodes),
 * beside the JSON read the node list is made of (`GET /v1/nodes`, one page) in the same run.
 *
 * N nodes in P pools are written to a fresh database (racks by label, GPU labels, some cordoned,
 * in maintenance, unreachable or lost), a tenth of them (schedulable ones) given an allocation
 * through the API, another tenth a finished drain (the operations page names their nodes); an
 * operator signs in to the console with the bootstrap key. Then each page is read R times, one
 * request at a time after a warm-up, over one keep-alive connection: the figure is its p95.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { createDb } from '../db/client';
import { nodeLabels, nodes, operations, pools } from '../db/schema';
import { finalPhase } from '../domain/progress';
import { hashSecret } from '../domain/secrets';
import { newId } from '../domain/ids';
import { startApiProcess } from './support/api-process';
import {
  defineBenchmark,
  intOption,
  measured,
  optionValues,
  type Figure,
  type Log,
} from './support/benchmark';
import { apiCaller } from './support/drains';
import { paced } from './support/pace';
import { environment, formatTable, writeResult } from './support/report';
import { startBenchDatabase } from './support/services';
import { round, summarize } from './support/stats';
import type { Teardown } from './support/teardown';

const NAME = 'console-render';
const GOAL_MS = 100;

const usage = [
  '  --nodes N      nodes in the fleet (default 1000)',
  '  --pools P      pools they are spread over (default 4)',
  '  --requests R   measured reads of each page (default 60)',
].join('\n');

interface Options {
  nodes: number;
  pools: number;
  requests: number;
}

function parse(args: string[]): Options {
  const values = optionValues(args, {
    nodes: { type: 'string' },
    pools: { type: 'string' },
    requests: { type: 'string' },
  });
  return {
    nodes: intOption('nodes', values.nodes, 1000, 1, 100_000),
    pools: intOption('pools', values.pools, 4, 1, 100),
    requests: intOption('requests', values.requests, 60, 5, 10_000),
  };
}

/** The fleet: racks of 16 nodes by the `rack` label, every 25th cordoned, every 40th in maintenance, every 50th unreachable, every 200th lost. */
async function seedFleet(databaseUrl: string, options: Options, operatorKey: string, port: number) {
  const { db, close } = createDb(databaseUrl, { max: 2 });
  try {
    const poolIds = Array.from({ length: options.pools }, (_, i) => `gpu-${i + 1}`);
    await db
      .insert(pools)
      .values(poolIds.map((id) => ({ id, kind: 'bare-metal' as const, siteId: 'fra1', tenantId: 'bench' })));
    const now = new Date();
    const rows = Array.from({ length: options.nodes }, (_, i) => ({
      id: newId('node'),
      poolId: poolIds[i % poolIds.length]!,
      tenantId: 'bench',
      siteId: 'fra1',
      hostname: `gpu-r${String(Math.floor(i / 16)).padStart(3, '0')}-${String(i % 16).padStart(2, '0')}`,
      provisionState: 'adopted' as const,
      connectivity: 'connected' as const,
      cordoned: i % 25 === 0,
      maintenance: i % 40 === 0,
      liveness:
        i % 200 === 7 ? ('lost' as const) : i % 50 === 3 ? ('unreachable' as const) : ('alive' as const),
      unreachableSince: i % 50 === 3 || i % 200 === 7 ? now : null,
      lastSeenAt: now,
    }));
    for (let at = 0; at < rows.length; at += 500) {
      const batch = rows.slice(at, at + 500);
      await db.insert(nodes).values(batch);
      await db.insert(nodeLabels).values(
        batch.flatMap((node, j) => [
          {
            nodeId: node.id,
            key: 'rack',
            value: `r${Math.floor((at + j) / 16)}`,
            source: 'operator' as const,
          },
          { nodeId: node.id, key: 'gpu.model', value: 'H100', source: 'operator' as const },
          { nodeId: node.id, key: 'gpu.count', value: '8', source: 'operator' as const },
        ]),
      );
    }
    // A page of operations, each on its own node (the operations page names them by hostname).
    await db.insert(operations).values(
      rows
        .filter((_, i) => i % 10 === 5)
        .map((node) => ({
          id: newId('op'),
          kind: 'drain' as const,
          nodeId: node.id,
          poolId: node.poolId,
          status: 'succeeded' as const,
          phase: finalPhase('drain', 'succeeded'),
          workflowId: `drain/${node.id}`,
          actor: 'key:bench',
          reason: 'bench',
          completedAt: now,
        })),
    );
    const call = apiCaller(port, operatorKey);
    await paced(
      rows.filter((_, i) => i % 10 === 1),
      { concurrency: 8 },
      async (node) => {
        const reply = await call('POST', '/v1/allocations', {
          nodeId: node.id,
          tenantId: 'bench',
          kind: 'job',
        });
        if (reply.status !== 201)
          throw new Error(`allocation: ${reply.status} ${JSON.stringify(reply.body)}`);
      },
    );
    return { poolId: poolIds[0]!, nodeId: rows[1]!.id };
  } finally {
    await close();
  }
}

/** One GET over the keep-alive agent: its status and the milliseconds to its last byte. */
function timedGet(agent: Agent, port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; ms: number; headers: Record<string, string | string[] | undefined> }>(
    (resolve, reject) => {
      const started = performance.now();
      const req = request({ host: '127.0.0.1', port, path, method: 'GET', agent, headers }, (res) => {
        res.on('data', () => {});
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, headers: res.headers }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    },
  );
}

/** The console session cookie of a key sign-in (the form the sign-in page posts). */
async function consoleCookie(port: number, key: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key }).toString(),
    redirect: 'manual',
  });
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  if (response.status !== 303 || !cookie) throw new Error(`console sign-in answered ${response.status}`);
  return cookie;
}

async function measure(options: Options, teardown: Teardown, log: Log): Promise<number> {
  const services = await startBenchDatabase(teardown, log);
  log(`postgres: ${services.postgres.source} (${services.postgres.database}); no Temporal`);
  const operatorKey = `bench-operator-${randomBytes(16).toString('hex')}`;
  const api = await startApiProcess(
    {
      databaseUrl: services.databaseUrl,
      taskQueue: `bench-console-${process.pid}`,
      bootstrapKeyHash: hashSecret(operatorKey),
      connections: 10,
    },
    teardown,
  );
  log(`API process ${api.pid} listening on :${api.port}; seeding ${options.nodes} nodes`);
  const { poolId, nodeId } = await seedFleet(services.databaseUrl, options, operatorKey, api.port);
  const cookie = await consoleCookie(api.port, operatorKey);

  const pages: { name: string; path: string; headers: Record<string, string> }[] = [
    {
      name: 'GET /v1/nodes (JSON, baseline)',
      path: '/v1/nodes',
      headers: { authorization: `Bearer ${operatorKey}` },
    },
    ...[
      ['overview', '/console'],
      ['node list', '/console/nodes'],
      ['node list, sorted by hostname, descending', '/console/nodes?sort=-hostname'],
      ['pools', '/console/pools'],
      ['a pool', `/console/pools/${poolId}`],
      ['a node', `/console/nodes/${nodeId}`],
      ['operations', '/console/operations'],
      ['audit', '/console/audit'],
    ].map(([name, path]) => ({ name: name!, path: path!, headers: { cookie } })),
  ];
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  teardown.add('close the HTTP agent', () => agent.destroy());
  const results = [];
  for (const page of pages) {
    for (let i = 0; i < 5; i++) await timedGet(agent, api.port, page.path, page.headers);
    const samples: number[] = [];
    for (let i = 0; i < options.requests; i++) {
      const reply = await timedGet(agent, api.port, page.path, page.headers);
      if (reply.status !== 200) throw new Error(`${page.path} answered ${reply.status}`);
      samples.push(reply.ms);
    }
    const summary = summarize(samples);
    const p95 = round([...samples].sort((a, b) => a - b)[Math.ceil(0.95 * samples.length) - 1]!, 1);
    results.push({ ...page, summary, p95 });
    log(`${page.name}: p50 ${summary.p50} ms, p95 ${p95} ms`);
  }
  const [baseline, ...consolePages] = results as [(typeof results)[0], ...typeof results];
  const figures: Figure[] = consolePages.map((page) => ({
    figure: `console ${page.name} (${page.path.replace(/nod_\w+|node_\w+/, '{id}')}), server render p95, ${options.nodes} nodes`,
    goal: `≤ ${GOAL_MS} ms`,
    value: `${page.p95} ms`,
    baseline: `${baseline.p95} ms GET /v1/nodes`,
    ratio: round(page.p95 / baseline.p95, 2),
    met: page.p95 <= GOAL_MS,
  }));
  console.log(
    formatTable(
      ['page', 'p50 ms', 'p95 ms', 'max ms', '× GET /v1/nodes p95'],
      results.map((r) => [r.name, r.summary.p50, r.p95, r.summary.max, round(r.p95 / baseline.p95, 2)]),
    ),
  );
  writeResult(NAME, { environment: environment(), options, results, figures });
  return figures.every((f) => f.met) ? 0 : 1;
}

export default defineBenchmark({
  summary: 'server render time of every console page with a fleet of 1,000 nodes (p95 ≤ 100 ms)',
  usage,
  quick: ['--requests', '30'],
  run: measured(parse, measure),
});

import { describe, expect, it } from 'vitest';
import { createLivenessActivities } from '../../activities/liveness';
import { clusterCounts } from '../../db/cluster-counts';
import type { LivenessSettings } from '../../domain/liveness';
import { createWorkerMetrics } from '../../observability/metrics';
import { joinedPoolNode, setNode } from '../support/builders';
import { useHarness } from '../support/harness';
import { parseSamples, valueOf } from '../support/scrape';

const SETTINGS: LivenessSettings = {
  sweepEveryMs: 250,
  leaseMs: 2_000,
  sessionTimeoutMs: 1_000,
  outageMs: 60_000,
  graceMs: 60_000,
};

// No worker: nothing sweeps this database but the test.
const h = useHarness({ worker: false });

describe("the worker's metrics", () => {
  it('count the nodes a sweep moved once, each sweep, and the fleet by liveness from the database', async () => {
    const metrics = createWorkerMetrics(clusterCounts(h.db));
    const read = async () => parseSamples(await metrics.registry.metrics());
    const silent = [await joinedPoolNode(h, 'pool-w'), await joinedPoolNode(h, 'pool-w')];
    const beating = await joinedPoolNode(h, 'pool-w');
    const longAgo = new Date(Date.now() - 60_000);
    for (const { nodeId } of silent)
      await setNode(h, nodeId, { connectivity: 'connected', lastSeenAt: longAgo });
    await setNode(h, beating.nodeId, {
      connectivity: 'connected',
      lastSeenAt: new Date(Date.now() + 60_000),
    });

    const start = await read();
    expect(valueOf(start, 'drydock_liveness_sweep_nodes_total', { change: 'unreachable' })).toBe(0);
    expect(valueOf(start, 'drydock_nodes', { liveness: 'alive' })).toBe(3);

    const { sweepLiveness } = createLivenessActivities(h.db, metrics);
    await sweepLiveness(SETTINGS);
    await sweepLiveness(SETTINGS);

    const after = await read();
    expect(valueOf(after, 'drydock_liveness_sweep_duration_seconds_count')).toBe(2);
    // The second sweep found them unreachable already: nothing moved twice.
    expect(valueOf(after, 'drydock_liveness_sweep_nodes_total', { change: 'unreachable' })).toBe(2);
    expect(valueOf(after, 'drydock_liveness_sweep_nodes_total', { change: 'disconnected' })).toBe(2);
    expect(valueOf(after, 'drydock_liveness_sweep_nodes_total', { change: 'lost' })).toBe(0);
    expect(valueOf(after, 'drydock_nodes', { liveness: 'unreachable' })).toBe(2);
    expect(valueOf(after, 'drydock_nodes', { liveness: 'alive' })).toBe(1);
    expect(valueOf(after, 'drydock_operations_running', { kind: 'drain' })).toBe(0);
    expect(valueOf(after, 'drydock_drains_waiting_for_budget')).toBe(0);
    // The process metrics say nothing of the runtime's version (an unauthenticated port).
    const text = await metrics.registry.metrics();
    expect(text).toContain('process_cpu_seconds_total');
    expect(text).not.toContain('nodejs_version_info');
    expect(text).not.toContain(process.version);
  });
});

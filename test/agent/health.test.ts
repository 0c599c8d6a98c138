import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readNode } from '../support/builders';
import { call, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordedLines, writeScript } from '../support/scripts';
import { joinedMachine, runMachine, useAgentBench, type Machine } from './agent-process';

const h = useHarness();
const bench = useAgentBench(h);

/** A machine joined through the real binary, with `probe.sh` (body `body`) as its GpuXidError probe. */
async function probed(poolId: string, body: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme' });
  const m = await joinedMachine(h, bench, poolId);
  const probe = writeScript(join(dirname(m.dir), 'probe.sh'), body);
  const config = join(dirname(m.dir), 'agent.yaml');
  writeFileSync(
    config,
    `probes:\n  gpu: { command: ["${probe}"], every: 100ms, timeout: 5s, condition: GpuXidError }\n`,
  );
  return { m, agent: await runMachine(bench, m, m.dir, ['--config', config]) };
}

const count = (text: string, pattern: RegExp) => text.match(new RegExp(pattern, 'g'))?.length ?? 0;
const runs = (file: string) => recordedLines(file).length;
const conditionOf = async (m: Machine) => (await readNode(h, m.nodeId)).conditions;

describe('drydock-agent health probes', () => {
  it('a flapping probe never reports a clear before healthyAfter: the condition stays reported', async () => {
    const dir = bench.dataDir();
    const file = join(dirname(dir), 'runs');
    // Healthy every other run, 100 ms apart: far faster than healthyAfter (60 s).
    const { m, agent } = await probed(
      'pool-health-flap',
      `echo run >> '${file}'\n[ $(wc -l < '${file}') -eq 1 ] && { echo xid-79; exit 1; }\n[ $(( $(wc -l < '${file}') % 2 )) -eq 0 ] && exit 0\necho xid-79\nexit 1`,
    );
    await agent.waitForLog(/probe gpu: reported GpuXidError true: xid-79/);
    const seen = runs(file);
    await eventually(async () => runs(file) >= seen + 20, 15_000);
    expect(await conditionOf(m)).toMatchObject([{ type: 'GpuXidError', status: true, reason: 'xid-79' }]);
    expect(count(agent.stderr(), /reported GpuXidError/)).toBe(1);
    expect(agent.stderr()).not.toMatch(/reported GpuXidError cleared/);
  });

  it('after the API refused the node and took it back, every condition is reported again', async () => {
    const { m, agent } = await probed('pool-health-again', 'echo xid-48\nexit 1');
    await agent.waitForLog(/probe gpu: reported GpuXidError true: xid-48/);
    const mark = agent.stderr().length;
    await call(h, 'POST', `/v1/nodes/${m.nodeId}/block`, { body: { reason: 'checking the rack' } });
    await agent.waitForLog(/blocked by the control plane; retrying/, 5_000, mark);
    await call(h, 'POST', `/v1/nodes/${m.nodeId}/unblock`, { body: { reason: 'rack checked' } });
    await agent.waitForLog(/unblocked: the control plane accepts this node again/, 10_000, mark);
    await agent.waitForLog(/probe gpu: reported GpuXidError true: xid-48/, 5_000, mark);
    expect(count(agent.stderr(), /reported GpuXidError true/)).toBe(2);
    expect(await conditionOf(m)).toMatchObject([{ type: 'GpuXidError', status: true, reason: 'xid-48' }]);
  });
});

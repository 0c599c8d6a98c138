import { appendFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { nodeCommands } from '../../db/schema';
import { remediationWorkflowId } from '../../workflows/definitions';
import { readNode } from '../support/builders';
import { eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordedLines } from '../support/scripts';
import {
  agentOf,
  remediateCommands as remediateCommandsOf,
  remediationsOf,
  WORKER_BOUND_MS,
} from '../support/remediation';
import { useAgentBench, type Machine } from './agent-process';
import {
  answeredCommands,
  machineConfig,
  machineScript,
  remediatingMachine,
  runWithConfig,
} from './remediating-machine';

const h = useHarness();
const bench = useAgentBench(h);

const commandRow = async (id: string) =>
  (await h.db.select().from(nodeCommands).where(eq(nodeCommands.id, id)))[0]!;

const remediateCommands = (nodeId: string) => remediateCommandsOf(h, nodeId);

/** The first remediate command once it is answered (not pending). */
const answeredCommand = async (nodeId: string) => (await answeredCommands(h, nodeId, 1))[0]!;

const machine = (poolId: string) => remediatingMachine(h, bench, poolId);
const running = (m: Machine, configFile: string) => runWithConfig(bench, m, configFile);

/** The node's last-seen time after flushing this API process's heartbeats. */
async function lastSeen(nodeId: string): Promise<number> {
  await h.deps.heartbeats.flush();
  return Date.parse((await readNode(h, nodeId)).lastSeenAt);
}

/** Kills what is left of a test script that recorded its pid (`pid=N` on its record line). */
function killRecorded(file: string): void {
  for (const line of recordedLines(file)) {
    const pid = Number(/pid=(\d+)/.exec(line)?.[1]);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

describe('drydock-agent carries out remediation', () => {
  it('a probe turns unhealthy: the condition is reported, the configured reset-accelerator runs with its environment and is acked; healthy again, the clear waits for healthyAfter', async () => {
    const m = await machine('pool-rem-probe');
    const flag = join(dirname(m.dir), 'healthy');
    const ran = join(dirname(m.dir), 'reset.log');
    const probe = machineScript(m, 'probe.sh', `[ -f '${flag}' ] && exit 0\necho "xid-79 on GPU 0"\nexit 1`);
    const reset = machineScript(
      m,
      'reset.sh',
      `echo "$DRYDOCK_NODE_ID $DRYDOCK_COMMAND_ID $DRYDOCK_ACTION $DRYDOCK_CONDITION home=$HOME path=\${PATH:+set} extra=\${DRYDOCK_TEST_SECRET:-none}" >> '${ran}'\ntouch '${flag}'`,
    );
    const file = machineConfig(
      m,
      `actions:\n  reset-accelerator: { command: ["${reset}"], timeout: 20s }\nprobes:\n  gpu: { command: ["${probe}"], every: 200ms, timeout: 5s, condition: GpuXidError }\n`,
    );
    // In the agent's environment, not in the action's: an action sees only what is documented.
    process.env.DRYDOCK_TEST_SECRET = 'leaked';
    const agent = await running(m, file).finally(() => delete process.env.DRYDOCK_TEST_SECRET);

    await agent.waitForLog(/probe gpu: reported GpuXidError true: xid-79 on GPU 0/);
    const command = await answeredCommand(m.nodeId);
    expect(command).toMatchObject({ action: 'reset-accelerator', status: 'acked', refuseReason: null });
    expect(recordedLines(ran)).toEqual([
      `${m.nodeId} ${command.id} reset-accelerator GpuXidError home=${process.env.HOME} path=set extra=none`,
    ]);
    await agent.waitForLog(new RegExp(`command ${command.id} \\(remediate\\) acked`));
    const node = await readNode(h, m.nodeId);
    expect(node.conditions).toMatchObject([{ type: 'GpuXidError', status: true, reason: 'xid-79 on GPU 0' }]);
    expect(node.noScheduleReasons).toContain('condition:GpuXidError');

    // Healthy again: the server says 60 s (healthyAfterSeconds), so the clear is not reported yet.
    await agent.waitForLog(/probe gpu: healthy; GpuXidError is reported cleared once it holds for 60 s/);
    expect((await readNode(h, m.nodeId)).conditions).toMatchObject([{ type: 'GpuXidError', status: true }]);
    expect(agent.stderr()).not.toMatch(/reported GpuXidError cleared/);
    expect(await eventsOf(h, m.nodeId, 'node.remediation.succeeded')).toEqual([]);
    // The remediation still waits on its first attempt, the acked one.
    const [operation] = await remediationsOf(h, m.nodeId);
    expect(operation).toMatchObject({
      status: 'running',
      progress: {
        phase: 'attempting',
        waitingFor: { attempt: 1, attempts: [{ commandId: command.id, outcome: null }] },
      },
    });
    const handle = h.temporal.workflow.getHandle(remediationWorkflowId(m.nodeId));
    expect((await handle.describe()).status.name).toBe('RUNNING');
    expect(recordedLines(ran)).toHaveLength(1);
  });

  it('a bad --config is a usage error (exit 2) naming the key; the agent does not start', async () => {
    const m = await machine('pool-rem-bad-config');
    const file = machineConfig(m, 'actions:\n  reboot: { command: ["systemctl", "reboot"], timeot: 5m }\n');
    const run = await bench.agent(['run', '--data-dir', m.dir, '--config', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: --config ${file}: actions.reboot.timeot: unknown key`);
    expect(existsSync(join(m.dir, 'agent.pid'))).toBe(false);
    expect((await readNode(h, m.nodeId)).connectivity).toBe('disconnected');
  });

  it('an action this node has no mapping for is refused, saying so and naming those it has', async () => {
    const m = await machine('pool-rem-unmapped');
    const file = machineConfig(m, `actions:\n  drain-nic: { command: ["/bin/true"] }\n`);
    const agent = await running(m, file);
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');

    const reason = 'no action reset-accelerator is configured on this node (configured: drain-nic)';
    const command = await answeredCommand(m.nodeId);
    expect(command).toMatchObject({ action: 'reset-accelerator', status: 'refused', refuseReason: reason });
    await agent.waitForLog(
      new RegExp(`command ${command.id} \\(remediate\\) refused: no action reset-accelerator`),
    );
    const [escalated] = await eventually(async () => {
      const events = await eventsOf(h, m.nodeId, 'node.remediation.escalated');
      return events.length > 0 ? events : undefined;
    }, WORKER_BOUND_MS);
    expect(escalated!.data.attempts).toContainEqual(
      expect.objectContaining({ action: 'reset-accelerator', commandId: command.id, refuseReason: reason }),
    );
  });

  it('an action that fails is refused with its exit code and the last lines of its stderr', async () => {
    const m = await machine('pool-rem-fails');
    const fails = machineScript(
      m,
      'reset.sh',
      'echo "checking GPUs" >&2\necho "line two" >&2\necho "\tGPU 0: busy" >&2\necho "reset failed" >&2\nexit 3',
    );
    const file = machineConfig(m, `actions:\n  reset-accelerator: { command: ["${fails}"], timeout: 20s }\n`);
    await running(m, file);
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');

    const command = await answeredCommand(m.nodeId);
    expect(command).toMatchObject({
      status: 'refused',
      refuseReason: 'reset-accelerator exited 3: line two | GPU 0: busy | reset failed',
    });
  });

  it('an action that does not exit within its timeout is killed and refused as timed out', async () => {
    const m = await machine('pool-rem-slow');
    const slow = machineScript(m, 'reset.sh', 'echo "resetting" >&2\nsleep 30');
    const file = machineConfig(
      m,
      `actions:\n  reset-accelerator: { command: ["${slow}"], timeout: 500ms }\n`,
    );
    await running(m, file);
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');

    const command = await answeredCommand(m.nodeId);
    expect(command).toMatchObject({
      status: 'refused',
      refuseReason: 'reset-accelerator timed out after 500 ms: resetting',
    });
  });

  it('killed while an action runs, the agent answers the command once on its next start and does not run it again', async () => {
    const m = await machine('pool-rem-killed');
    const ran = join(dirname(m.dir), 'reset.log');
    const slow = machineScript(m, 'reset.sh', `echo "ran pid=$$" >> '${ran}'\nsleep 30`);
    const file = machineConfig(m, `actions:\n  reset-accelerator: { command: ["${slow}"], timeout: 1m }\n`);
    const first = await running(m, file);
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');
    await eventually(async () => recordedLines(ran).length === 1, WORKER_BOUND_MS);
    first.child.kill('SIGKILL');
    await first.exited;
    killRecorded(ran);
    const [command] = await remediateCommands(m.nodeId);
    expect(command).toMatchObject({ status: 'pending' });

    const second = await running(m, file);
    const reason = 'the agent stopped while reset-accelerator ran; not run again';
    expect(await answeredCommand(m.nodeId)).toMatchObject({
      id: command!.id,
      status: 'refused',
      refuseReason: reason,
    });
    await second.waitForLog(new RegExp(`command ${command!.id} \\(remediate\\) refused: the agent stopped`));
    expect(recordedLines(ran)).toHaveLength(1);
    // The refusal moves the ladder on at once: the next rung (reboot, which this machine has no
    // action for) is refused too. Each command is answered once.
    const [, next] = await answeredCommands(h, m.nodeId, 2);
    expect(next).toMatchObject({ action: 'reboot', status: 'refused' });
    await second.waitForLog(new RegExp(`command ${next!.id} \\(remediate\\) refused`));
    expect(second.stderr().match(/command \S+ \(remediate\) (acked|refused)/g)).toEqual([
      `command ${command!.id} (remediate) refused`,
      `command ${next!.id} (remediate) refused`,
    ]);
    expect(second.stderr()).not.toMatch(/running reset-accelerator/);
  });

  it('heartbeats go on while an action runs; stopped (SIGTERM) meanwhile, the agent kills the action and does not report it', async () => {
    const m = await machine('pool-rem-stopped');
    const ran = join(dirname(m.dir), 'reset.log');
    const slow = machineScript(
      m,
      'reset.sh',
      `echo "ran pid=$$" >> '${ran}'\nsleep 30\necho "finished" >> '${ran}'`,
    );
    const file = machineConfig(m, `actions:\n  reset-accelerator: { command: ["${slow}"], timeout: 1m }\n`);
    const agent = await running(m, file);
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');
    await eventually(async () => recordedLines(ran).length === 1, WORKER_BOUND_MS);
    const pid = Number(/pid=(\d+)/.exec(recordedLines(ran)[0]!)![1]);
    // Heartbeats go on while the action runs.
    const seen = await lastSeen(m.nodeId);
    await eventually(async () => (await lastSeen(m.nodeId)) > seen, 10_000);

    expect((await bench.agent(['stop', '--data-dir', m.dir])).code).toBe(0);
    expect(await agent.exited).toBe(0);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(recordedLines(ran)).toHaveLength(1);
    const [command] = await remediateCommands(m.nodeId);
    expect(command).toMatchObject({ status: 'pending' });
    expect(agent.stderr()).toMatch(
      new RegExp(`command ${command!.id} \\(remediate\\): stopped while reset-accelerator ran`),
    );
  });

  // Three agent starts and stops: a minute is short for that on a loaded machine.
  it('an action that restarts the machine is acked before it runs and outlives a stop; on the next start the agent reports it came back, once', async () => {
    const m = await machine('pool-rem-restarts');
    const ran = join(dirname(m.dir), 'reboot.log');
    // Stands for a reboot: records that it ran, then hangs until the machine "goes down".
    const reboot = machineScript(m, 'reboot.sh', `echo "ran pid=$$ $DRYDOCK_ACTION" >> '${ran}'\nsleep 30`);
    const file = machineConfig(
      m,
      `actions:\n  reset-accelerator: { command: ["${reboot}"], timeout: 1m, restarts: true }\n`,
    );
    const first = await running(m, file);
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');
    await eventually(async () => recordedLines(ran).length === 1, WORKER_BOUND_MS);
    const [command] = await remediateCommands(m.nodeId);
    // Acked before it ran: the API had the ack when the action started.
    expect(command).toMatchObject({ status: 'acked', action: 'reset-accelerator' });
    const log = first.stderr();
    expect(log.indexOf(`command ${command!.id} (remediate) acked`)).toBeGreaterThan(-1);
    expect(log.indexOf(`command ${command!.id} (remediate) acked`)).toBeLessThan(
      log.indexOf(`command ${command!.id}: running reset-accelerator`),
    );
    expect(await eventsOf(h, m.nodeId, 'node.remediation.returned')).toEqual([]);
    // Stopped meanwhile (as systemd stops it for a reboot), the agent leaves the action running.
    expect((await bench.agent(['stop', '--data-dir', m.dir])).code).toBe(0);
    expect(await first.exited).toBe(0);
    const pid = Number(/pid=(\d+)/.exec(recordedLines(ran)[0]!)![1]);
    expect(() => process.kill(pid, 0)).not.toThrow();
    killRecorded(ran);

    const second = await running(m, file);
    await second.waitForLog(
      new RegExp(
        `command ${command!.id} \\(remediate\\): reported that the machine came back from reset-accelerator`,
      ),
    );
    const returned = await eventsOf(h, m.nodeId, 'node.remediation.returned');
    expect(returned).toMatchObject([
      {
        actor: `node:${m.nodeId}`,
        operationId: command!.operationId,
        data: { commandId: command!.id, action: 'reset-accelerator', attempt: 1 },
      },
    ]);
    expect(recordedLines(ran)).toHaveLength(1);
    expect((await bench.agent(['stop', '--data-dir', m.dir])).code).toBe(0);
    await second.exited;

    // A third start has nothing to report: the journal says the return was heard.
    const third = await running(m, file);
    expect((await bench.agent(['stop', '--data-dir', m.dir])).code).toBe(0);
    await third.exited;
    expect(third.stderr()).not.toMatch(/came back/);
    expect(await eventsOf(h, m.nodeId, 'node.remediation.returned')).toHaveLength(1);
    expect(recordedLines(ran)).toHaveLength(1);
    expect((await commandRow(command!.id)).status).toBe('acked');
  }, 120_000);

  it('a restarting action journaled as acked whose ack never reached the API runs once the ack gets through, once', async () => {
    const m = await machine('pool-rem-unsent-ack');
    const ran = join(dirname(m.dir), 'reboot.log');
    const reboot = machineScript(m, 'reboot.sh', `echo "ran pid=$$" >> '${ran}'\nsleep 30`);
    const file = machineConfig(
      m,
      `actions:\n  reset-accelerator: { command: ["${reboot}"], restarts: true }\n`,
    );
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');
    const [command] = await eventually(async () => {
      const commands = await remediateCommands(m.nodeId);
      return commands.length > 0 ? commands : undefined;
    }, WORKER_BOUND_MS);
    // Journaled as acked, then the agent died before the ack reached the API.
    const entry = {
      id: command!.id,
      kind: 'remediate',
      outcome: 'acked',
      action: 'reset-accelerator',
      restarts: true,
      at: new Date().toISOString(),
    };
    appendFileSync(join(m.dir, 'journal.jsonl'), `${JSON.stringify(entry)}\n`);

    const agent = await running(m, file);
    await eventually(async () => recordedLines(ran).length === 1, WORKER_BOUND_MS);
    expect(await commandRow(command!.id)).toMatchObject({ status: 'acked' });
    expect((await bench.agent(['stop', '--data-dir', m.dir])).code).toBe(0);
    expect(await agent.exited).toBe(0);
    killRecorded(ran);
    expect(agent.stderr()).not.toMatch(/came back/);
    expect(await eventsOf(h, m.nodeId, 'node.remediation.returned')).toEqual([]);

    const back = await running(m, file);
    await back.waitForLog(/reported that the machine came back from reset-accelerator/);
    expect(await eventsOf(h, m.nodeId, 'node.remediation.returned')).toHaveLength(1);
    expect(recordedLines(ran)).toHaveLength(1);
  });
});

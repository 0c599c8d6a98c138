import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readNode } from '../support/builders';
import { useHarness } from '../support/harness';
import { agentOf, remediateCommands } from '../support/remediation';
import { recordedLines } from '../support/scripts';
import { runMachine, useAgentBench } from './agent-process';
import { answeredCommands, machineConfig, machineScript, remediatingMachine } from './remediating-machine';

/**
 * `drydock-agent run --action / --restarting-action / --probe`: the real agent process set up
 * from its command line, as a systemd unit's `ExecStart` would, with or without a config file.
 */
const h = useHarness();
const bench = useAgentBench(h);

describe('drydock-agent run configured by flags', () => {
  it('without a file: the --probe reports its condition, and the --action runs its words as argv and is acked', async () => {
    const m = await remediatingMachine(h, bench, 'pool-flags-only');
    const record = join(dirname(m.dir), 'ran.log');
    const probe = machineScript(m, 'probe.sh', 'echo "xid-79 on GPU 2"\nexit 1');
    // Each argument on its own line: how the words of COMMAND reached the program.
    const reset = machineScript(
      m,
      'reset.sh',
      `for a in "$@"; do echo "arg $a" >> '${record}'; done\necho "ran $DRYDOCK_ACTION $DRYDOCK_CONDITION" >> '${record}'`,
    );
    const agent = await runMachine(bench, m, m.dir, [
      '--probe',
      `GpuXidError=${probe}`,
      '--action',
      `reset-accelerator=${reset} --gpus=0,1   --mode full`,
      '--restarting-action',
      'reboot=/bin/false',
    ]);

    await agent.waitForLog(/probe GpuXidError: reported GpuXidError true: xid-79 on GPU 2/);
    const [command] = await answeredCommands(h, m.nodeId, 1);
    expect(command).toMatchObject({ action: 'reset-accelerator', status: 'acked', refuseReason: null });
    // The ack came after the script ran, once, with COMMAND split on whitespace and its commas kept.
    expect(recordedLines(record)).toEqual([
      'arg --gpus=0,1',
      'arg --mode',
      'arg full',
      'ran reset-accelerator GpuXidError',
    ]);
    await agent.waitForLog(new RegExp(`command ${command!.id} \\(remediate\\) acked`));
    const node = await readNode(h, m.nodeId);
    expect(node.conditions).toMatchObject([{ type: 'GpuXidError', status: true, reason: 'xid-79 on GPU 2' }]);
    expect(node.noScheduleReasons).toContain('condition:GpuXidError');
    // The acked attempt waits for the clear: the ladder did not go on to the flag's reboot.
    expect(await remediateCommands(h, m.nodeId)).toHaveLength(1);
    expect(agent.stderr()).not.toMatch(/running reboot/);
  });

  it("with a file: the --action replaces the file's action of that name; the file's other actions stay", async () => {
    const m = await remediatingMachine(h, bench, 'pool-flags-replace');
    const record = join(dirname(m.dir), 'ran.log');
    const fileReset = machineScript(m, 'file-reset.sh', `echo "file" >> '${record}'`);
    const flagReset = machineScript(
      m,
      'flag-reset.sh',
      `echo "flag" >> '${record}'\necho "GPU 0 busy" >&2\nexit 4`,
    );
    const file = machineConfig(
      m,
      `actions:\n  reset-accelerator: { command: ["${fileReset}"] }\n  drain-nic: { command: ["/bin/true"] }\n`,
    );
    await runMachine(bench, m, m.dir, ['--config', file, '--action', `reset-accelerator=${flagReset}`]);
    await agentOf(h, m.credential).report('GpuXidError', true, 'xid-79');

    // The flag's script ran (and failed), not the file's; the refused rung climbs to reboot, which
    // neither maps: its refusal lists what is configured, the file's drain-nic among them.
    const [reset, reboot] = await answeredCommands(h, m.nodeId, 2);
    expect(reset).toMatchObject({
      action: 'reset-accelerator',
      status: 'refused',
      refuseReason: 'reset-accelerator exited 4: GPU 0 busy',
    });
    expect(reboot).toMatchObject({
      action: 'reboot',
      status: 'refused',
      refuseReason: 'no action reboot is configured on this node (configured: reset-accelerator, drain-nic)',
    });
    expect(recordedLines(record)).toEqual(['flag']);
  });

  it('a bad flag is a usage error (exit 2) naming the flag as given; the agent does not start', async () => {
    const m = await remediatingMachine(h, bench, 'pool-flags-bad');
    const run = await bench.agent(['run', '--data-dir', m.dir, '--action', 'reset-accelerator=']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'error: --action reset-accelerator=: must name a program: an empty command runs nothing',
    );
    expect(existsSync(join(m.dir, 'agent.pid'))).toBe(false);
    expect((await readNode(h, m.nodeId)).connectivity).toBe('disconnected');
  });
});

import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordedLines } from '../support/scripts';
import { joinedMachine, runMachine, useAgentBench, type Machine } from './agent-process';
import { machineConfig, machineScript } from './remediating-machine';

const h = useHarness();
const bench = useAgentBench(h);

/** The command once it has ended. */
async function ended(id: string) {
  for (;;) {
    const reply = await call(h, 'GET', `/v1/commands/${id}?wait=10`);
    expect(reply.status).toBe(200);
    if (!['pending', 'running'].includes(reply.body.status)) return reply.body;
  }
}

const run = async (nodeId: string, action: string, args: Record<string, string> = {}) => {
  const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/commands`, {
    body: { action, args, reason: 'test' },
  });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body.id as string;
};

/** A joined machine with its boot id file (a stand-in for the kernel's) and its config. */
async function machine(poolId: string, yaml: (m: Machine, bootFile: string) => string) {
  const m = await joinedMachine(h, bench, poolId);
  const bootFile = join(dirname(m.dir), 'boot_id');
  writeFileSync(bootFile, `${randomUUID()}\n`);
  const config = machineConfig(m, yaml(m, bootFile));
  const start = () => runMachine(bench, m, m.dir, ['--config', config, '--boot-id-file', bootFile]);
  return { m, bootFile, start };
}

describe('drydock-agent runs the actions of its config for run commands', () => {
  it('passes arguments as argv words, keeps output to the limit saying how much was dropped, and reports its actions and boot', async () => {
    const { m, bootFile, start } = await machine('pool-agent-cmd', (m) => {
      const words = machineScript(m, 'words.sh', 'for w in "$@"; do echo "[$w]"; done; echo "to stderr" >&2');
      const flood = machineScript(
        m,
        'flood.sh',
        'head -c 300000 /dev/zero | tr "\\0" "x"; printf "\\000\\377 tail"',
      );
      return [
        'actions:',
        `  words: { command: ["${words}", "fixed", "--unit={unit}"], params: { unit: { pattern: "[a-z.-]+", default: "kubelet" } } }`,
        `  flood: { command: ["${flood}"], outputLimit: 4096 }`,
        '',
      ].join('\n');
    });
    const agent = await start();
    const [booted] = await eventsOf(h, m.nodeId, 'node.booted');
    expect(booted!.data).toMatchObject({ bootId: recordedLines(bootFile)[0], previousBootId: null });

    const words = await ended(await run(m.nodeId, 'words', { unit: 'slurmd' }));
    expect(words).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(words.output).toEqual({
      stdout: '[fixed]\n[--unit=slurmd]\n',
      stderr: 'to stderr\n',
      droppedBytes: 0,
    });
    // A value is one argument whatever it holds: the agent checks it against the pattern first.
    const injected = await ended(await run(m.nodeId, 'words', { unit: 'a b; touch /tmp/pwned' }));
    expect(injected).toMatchObject({ status: 'refused', startedAt: null });
    expect(injected.statusReason).toBe(
      'unit="a b; touch /tmp/pwned" does not match the pattern [a-z.-]+ of action words',
    );

    const flood = await ended(await run(m.nodeId, 'flood'));
    expect(flood).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(flood.output.stdout).toBe('x'.repeat(4096));
    expect(flood.output.droppedBytes).toBe(300000 + 7 - 4096);
    await agent.waitForLog(new RegExp(`command ${flood.id} \\(flood\\) succeeded`));
    // Reported: nothing of its output is left in the data directory.
    expect(
      existsSync(join(m.dir, 'command-output')) ? readdirSync(join(m.dir, 'command-output')) : [],
    ).toEqual([]);
  });

  it('an agent killed while an action runs reports it returned on its next start, and does not run it again', async () => {
    const record = { file: '' };
    const { m, start } = await machine('pool-agent-cmd-kill', (m) => {
      record.file = join(dirname(m.dir), 'slow.log');
      const slow = machineScript(m, 'slow.sh', `echo "started pid=$$" >> '${record.file}'\nexec sleep 60`);
      return `actions:\n  slow: { command: ["${slow}"], timeout: 2m }\n`;
    });
    const first = await start();
    const id = await run(m.nodeId, 'slow');
    await eventually(async () => (recordedLines(record.file).length > 0 ? true : undefined));
    expect((await call(h, 'GET', `/v1/commands/${id}`)).body.status).toBe('running');
    first.child.kill('SIGKILL');
    await first.exited;
    for (const line of recordedLines(record.file))
      process.kill(Number(/pid=(\d+)/.exec(line)![1]), 'SIGKILL');

    await start();
    const returned = await ended(id);
    expect(returned).toMatchObject({
      status: 'returned',
      exitCode: null,
      statusReason: 'the agent started again while slow ran; it is not run again',
    });
    expect(recordedLines(record.file)).toHaveLength(1);
    const [event] = await eventsOf(h, m.nodeId, 'node.command.returned');
    expect(event!.data).toMatchObject({ commandId: id, reason: returned.statusReason });
  });

  it('a verified reboot with the real agent: its reboot action writes a new boot id and stops the agent, which comes back on it', async () => {
    const { m, bootFile, start } = await machine('pool-agent-reboot', (m, bootFile) => {
      // A stand-in for `systemctl reboot`: a new boot id, then the agent stopped, as a shutdown does.
      const reboot = machineScript(
        m,
        'reboot.sh',
        `cat /proc/sys/kernel/random/uuid > '${bootFile}'\nkill -TERM "$(cat '${join(m.dir, 'agent.pid')}')"`,
      );
      return `actions:\n  reboot: { command: ["${reboot}"], timeout: 1m, restarts: true }\n`;
    });
    const first = await start();
    const before = recordedLines(bootFile)[0]!;
    const asked = await call(h, 'POST', `/v1/nodes/${m.nodeId}/reboot`, {
      body: { reason: 'kernel update', uncordon: true, healthyAfter: '1s' },
    });
    expect(asked.status).toBe(202);
    // The action stops the agent (SIGTERM: a clean stop); a supervisor starts it again on the new boot.
    expect(await first.exited).toBe(0);
    const after = recordedLines(bootFile)[0]!;
    expect(after).not.toBe(before);
    await start();
    const op = await eventually(async () => {
      const read = (await call(h, 'GET', `/v1/operations/${asked.body.operation.id}`)).body;
      return ['succeeded', 'failed'].includes(read.status) ? read : undefined;
    }, 60_000);
    expect(op.status, JSON.stringify(op.error)).toBe('succeeded');
    expect(op.progress.waitingFor).toMatchObject({ bootIdBefore: before });
    const node = (await call(h, 'GET', `/v1/nodes/${m.nodeId}`)).body;
    expect(node).toMatchObject({ bootId: after, cordoned: false, maintenance: false });
    // The reboot ran once, and the agent back on its new boot reported it returned.
    const reboot = await eventually(async () => {
      const read = (await call(h, 'GET', `/v1/commands/${op.progress.waitingFor.steps[0].commandId}`)).body;
      return read.status === 'returned' ? read : undefined;
    });
    expect(reboot.statusReason).toBe('the machine restarted (reboot)');
    expect((await eventsOf(h, m.nodeId, 'node.booted')).map((e) => e.data.bootId)).toEqual([before, after]);
  });
});

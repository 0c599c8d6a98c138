import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useScripts } from '../test/support/scripts';
import { CommandHandlers, type AgentCommand, type CommandContext } from './commands';
import type { ActionConfig } from './config';
import { remediateHandler } from './remediate';

const { dir, script } = useScripts('drydock-remediate-');

const command: AgentCommand = {
  id: 'cmd_01k5w8v3x9q2m4n6p8r0s2t4v6',
  kind: 'remediate',
  action: 'reset-accelerator',
  condition: 'GpuXidError',
  args: null,
  payload: null,
  signature: null,
  createdAt: new Date().toISOString(),
};
const context: CommandContext = {
  nodeId: 'node_test',
  clusterId: 'cluster',
  caPublicKey: '',
  log: () => {},
  signal: new AbortController().signal,
};

/** What the agent's handlers decide for `command` with `actions`, a `run` carried out. */
async function outcome(actions: Record<string, ActionConfig>, sent: AgentCommand = command) {
  const decided = await new CommandHandlers()
    .on('remediate', remediateHandler(actions))
    .handle(sent, context);
  return decided.outcome === 'run' ? { action: decided.action, ...(await decided.run()) } : decided;
}

const action = (path: string, more: Partial<ActionConfig> = {}): ActionConfig => ({
  command: [path],
  timeoutMs: 5_000,
  restarts: false,
  params: {},
  outputLimit: 1024 * 1024,
  ...more,
});

describe('remediate handler', () => {
  it('runs the mapped action: exit 0 acks', async () => {
    expect(await outcome({ 'reset-accelerator': action(script('exit 0')) })).toEqual({
      action: 'reset-accelerator',
      outcome: 'ack',
    });
  });

  it('a long stderr is cut at its start, never its end, to the 256 characters the API takes', async () => {
    const long = 'x'.repeat(200);
    const result = await outcome({
      'reset-accelerator': action(
        script(`echo "${long}" >&2\necho "${long}" >&2\necho "GPU 0: reset refused" >&2\nexit 9`),
      ),
    });
    expect(result).toMatchObject({ outcome: 'refuse' });
    const reason = (result as { reason: string }).reason;
    expect(reason.length).toBe(256);
    expect(reason).toMatch(/^reset-accelerator exited 9: …x* \| x{200} \| GPU 0: reset refused$/);
  });

  it('a program that cannot start is refused saying so', async () => {
    expect(await outcome({ 'reset-accelerator': action(join(dir, 'missing')) })).toEqual({
      action: 'reset-accelerator',
      outcome: 'refuse',
      reason: `reset-accelerator could not start: spawn ${join(dir, 'missing')} ENOENT`,
    });
  });

  it('an unmapped or unnamed action is refused, naming those configured', async () => {
    expect(await outcome({})).toEqual({
      outcome: 'refuse',
      reason: 'no action reset-accelerator is configured on this node (configured: none)',
    });
    expect(
      await outcome(
        { reboot: action('/bin/true'), 'drain-nic': action('/bin/true') },
        { ...command, action: null },
      ),
    ).toEqual({
      outcome: 'refuse',
      reason: 'no action (none named) is configured on this node (configured: reboot, drain-nic)',
    });
    // Not a key of any object: only names the file configured count.
    expect(await outcome({}, { ...command, action: 'constructor' })).toMatchObject({ outcome: 'refuse' });
  });

  it('a restarting action is an ack whose after-step runs it', async () => {
    const decided = await new CommandHandlers()
      .on(
        'remediate',
        remediateHandler({ 'reset-accelerator': action(script('exit 4'), { restarts: true }) }),
      )
      .handle(command, context);
    expect(decided).toMatchObject({ outcome: 'ack', action: 'reset-accelerator', restarts: true });
    const after = (decided as { after: () => Promise<void> }).after;
    await expect(after()).rejects.toThrow('reset-accelerator exited 4');
  });
});

import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../cli-kit/parse';
import type { FlagValues } from '../cli-kit/spec';
import { EMPTY_CONFIG, parseAgentConfig, type AgentConfig } from './config';
import { withConfigFlags, type configFlags } from './config-flags';
import { UsageError } from './errors';
import { drydockAgent } from './program';

/** The flags of `drydock-agent run --data-dir d ARGS…` as the parser checks them. */
function runFlags(...args: string[]): FlagValues<typeof configFlags> {
  const line = parseCommandLine(drydockAgent, ['run', '--data-dir', 'd', ...args]);
  if (line.kind !== 'run') throw new Error('help, not a run');
  return line.flags as FlagValues<typeof configFlags>;
}

const fromFlags = (...args: string[]) => withConfigFlags(EMPTY_CONFIG, runFlags(...args));

/** The usage error the flags are refused with, with or without a file's configuration. */
function problem(args: string[], config: AgentConfig = EMPTY_CONFIG): string {
  try {
    withConfigFlags(config, runFlags(...args));
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`no usage error for ${args.join(' ')}`);
}

const FILE = parseAgentConfig(
  {
    actions: {
      'reset-accelerator': { command: ['/usr/local/lib/drydock/reset-accelerator.sh'], timeout: '2m' },
      reboot: { command: ['systemctl', 'reboot'], restarts: true },
    },
    probes: {
      gpu: { command: ['/usr/local/lib/drydock/gpu-xid-probe.sh', '8'], condition: 'GpuXidError' },
      nic: { command: ['nic-probe'], every: '5s', condition: 'NicFlap' },
    },
  },
  'agent.yaml',
);

describe('agent config flags (run --action, --restarting-action, --probe)', () => {
  it('flags alone configure actions and probes with the defaults; COMMAND splits on whitespace, commas kept', () => {
    const config = fromFlags(
      '--action',
      'reset-accelerator=nvidia-smi  -r',
      '--restarting-action',
      'reboot=systemctl reboot',
      '--probe',
      'GpuXidError=nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader',
      '--action=drain-nic=\t/usr/local/bin/drain-nic --all ',
    );
    expect(config).toEqual({
      actions: {
        'reset-accelerator': {
          command: ['nvidia-smi', '-r'],
          timeoutMs: 300_000,
          restarts: false,
          params: {},
          outputLimit: 1_048_576,
        },
        'drain-nic': {
          command: ['/usr/local/bin/drain-nic', '--all'],
          timeoutMs: 300_000,
          restarts: false,
          params: {},
          outputLimit: 1_048_576,
        },
        reboot: {
          command: ['systemctl', 'reboot'],
          timeoutMs: 300_000,
          restarts: true,
          params: {},
          outputLimit: 1_048_576,
        },
      },
      probes: {
        GpuXidError: {
          command: ['nvidia-smi', '--query-gpu=index,pci.bus_id', '--format=csv,noheader'],
          everyMs: 30_000,
          timeoutMs: 10_000,
          condition: 'GpuXidError',
        },
      },
    });
  });

  it("the systemd unit's form (examples/agent/drydock-agent.service): --flag=NAME=COMMAND, one word each", () => {
    const config = fromFlags(
      '--action',
      'reset-accelerator=/usr/local/lib/drydock/reset-accelerator.sh',
      '--restarting-action=reboot=systemctl reboot',
      '--probe=GpuXidError=/usr/local/lib/drydock/gpu-xid-probe.sh 8',
    );
    expect(config.actions.reboot).toEqual({
      command: ['systemctl', 'reboot'],
      timeoutMs: 300_000,
      restarts: true,
      params: {},
      outputLimit: 1_048_576,
    });
    expect(config.probes.GpuXidError).toMatchObject({
      command: ['/usr/local/lib/drydock/gpu-xid-probe.sh', '8'],
      condition: 'GpuXidError',
    });
    expect(Object.keys(config.actions)).toEqual(['reset-accelerator', 'reboot']);
  });

  it('no flags: the configuration is the file’s, unchanged', () => {
    expect(withConfigFlags(FILE, runFlags())).toEqual(FILE);
    expect(fromFlags()).toEqual({ actions: {}, probes: {} });
  });

  it("flags add to the file's entries; one naming a file's action, or a file probe's condition, replaces it", () => {
    const config = withConfigFlags(
      FILE,
      runFlags(
        '--action',
        'reboot=/usr/local/bin/safe-reboot',
        '--action',
        'drain-nic=drain-nic',
        '--probe',
        'GpuXidError=/opt/gpu-check',
      ),
    );
    expect(config).toEqual({
      actions: {
        // The file's, untouched.
        'reset-accelerator': FILE.actions['reset-accelerator'],
        // Replaced whole: the flag's action does not restart, and has the default timeout.
        reboot: {
          command: ['/usr/local/bin/safe-reboot'],
          timeoutMs: 300_000,
          restarts: false,
          params: {},
          outputLimit: 1_048_576,
        },
        'drain-nic': {
          command: ['drain-nic'],
          timeoutMs: 300_000,
          restarts: false,
          params: {},
          outputLimit: 1_048_576,
        },
      },
      probes: {
        // The file's probe gpu of GpuXidError is gone; its nic probe stays.
        nic: FILE.probes.nic,
        GpuXidError: {
          command: ['/opt/gpu-check'],
          everyMs: 30_000,
          timeoutMs: 10_000,
          condition: 'GpuXidError',
        },
      },
    });
    // The file's configuration is not changed in place.
    expect(FILE.actions.reboot).toMatchObject({ command: ['systemctl', 'reboot'], restarts: true });
    expect(Object.keys(FILE.probes)).toEqual(['gpu', 'nic']);
  });

  it('refuses bad input by the file’s rules, naming the flag as given', () => {
    const cases: [string[], string][] = [
      [
        ['--action', 'reset-accelerator='],
        '--action reset-accelerator=: must name a program: an empty command runs nothing',
      ],
      [
        ['--restarting-action', 'reboot=   '],
        '--restarting-action reboot=   : must name a program: an empty command runs nothing',
      ],
      [['--action', 'nvidia-smi -r'], '--action nvidia-smi -r: must be NAME=COMMAND'],
      [['--action', '=nvidia-smi -r'], '--action =nvidia-smi -r: must be NAME=COMMAND'],
      [['--probe', '/opt/gpu-check'], '--probe /opt/gpu-check: must be CONDITION=COMMAND'],
      [
        ['--action', 'Reset=nvidia-smi -r'],
        '--action Reset=nvidia-smi -r: is not a valid name: 1–63 of a-z 0-9 -, starting with a letter',
      ],
      [
        ['--probe', 'gpu-xid=/opt/gpu-check'],
        '--probe gpu-xid=/opt/gpu-check: must be a condition type such as GpuXidError: a letter, then letters and digits',
      ],
      [
        ['--action', 'reboot=systemctl reboot', '--restarting-action', 'reboot=systemctl reboot'],
        '--restarting-action reboot=systemctl reboot: action reboot is already given by --action reboot=systemctl reboot',
      ],
      [
        ['--action', 'reboot=a', '--action', 'reboot=b'],
        '--action reboot=b: action reboot is already given by --action reboot=a',
      ],
      [
        ['--probe', 'GpuXidError=a', '--probe', 'GpuXidError=b'],
        '--probe GpuXidError=b: GpuXidError is already probed by --probe GpuXidError=a',
      ],
    ];
    for (const [args, message] of cases) expect(problem(args), args.join(' ')).toBe(message);
    // A probe is named after its condition: one that is the name of a file's probe of another is refused.
    expect(problem(['--probe', 'gpu=/opt/gpu-check'], FILE)).toBe(
      "--probe gpu=/opt/gpu-check: --config's probe gpu probes GpuXidError; rename it in the file",
    );
  });

  it('the parser refuses a flag without its value, pointing at run --help', () => {
    expect(() => runFlags('--action')).toThrow(
      new UsageError('--action needs a value (NAME=COMMAND)', 'run'),
    );
    expect(() => runFlags('--probe', '--action', 'a=b')).toThrow(
      new UsageError('--probe needs a value (CONDITION=COMMAND)', 'run'),
    );
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAgentConfig } from './config';
import { UsageError } from './errors';

const dir = mkdtempSync(join(tmpdir(), 'drydock-agent-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes `text` to a fresh file and loads it. */
function load(text: string) {
  const file = join(dir, `agent-${++files}.yaml`);
  writeFileSync(file, text);
  return loadAgentConfig(file);
}

/** The usage error loading `text` throws, without the `--config FILE: ` prefix. */
function problem(text: string): string {
  try {
    load(text);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message.replace(/^--config \S+: /, '');
  }
  throw new Error(`no usage error for:\n${text}`);
}

describe('agent config (--config FILE)', () => {
  it('maps actions and probes, with durations in ms and the defaults filled in', () => {
    const config = load(`
actions:
  reset-accelerator: { command: ["nvidia-smi", "-r"], timeout: 2m }
  reboot: { command: ["systemctl", "reboot"], timeout: 5m, restarts: true }
  drain-nic: { command: ["/usr/local/bin/drain-nic"] }
probes:
  gpu: { command: ["/usr/local/lib/drydock/gpu-probe"], every: 30s, condition: GpuXidError, timeout: 20s }
  nic: { command: ["nic-probe", "--all"], condition: NicFlap }
`);
    expect(config).toEqual({
      actions: {
        'reset-accelerator': {
          command: ['nvidia-smi', '-r'],
          timeoutMs: 120_000,
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
        'drain-nic': {
          command: ['/usr/local/bin/drain-nic'],
          timeoutMs: 300_000,
          restarts: false,
          params: {},
          outputLimit: 1_048_576,
        },
      },
      probes: {
        gpu: {
          command: ['/usr/local/lib/drydock/gpu-probe'],
          everyMs: 30_000,
          timeoutMs: 20_000,
          condition: 'GpuXidError',
        },
        nic: { command: ['nic-probe', '--all'], everyMs: 30_000, timeoutMs: 10_000, condition: 'NicFlap' },
      },
    });
  });

  it('maps parameters and an output limit; a placeholder names a declared parameter, a default matches its pattern', () => {
    const config = load(`
actions:
  logs:
    command: ["journalctl", "--since", "-{since}", "--unit={unit}"]
    params: { since: { pattern: "[0-9]+[smhd]", default: "1h" }, unit: { pattern: "[a-z.-]+" } }
    outputLimit: 65536
`);
    expect(config.actions.logs).toMatchObject({ outputLimit: 65_536, restarts: false });
    expect(config.actions.logs!.params).toEqual({
      since: { pattern: '[0-9]+[smhd]', matches: /^(?:[0-9]+[smhd])$/, default: '1h' },
      unit: { pattern: '[a-z.-]+', matches: /^(?:[a-z.-]+)$/ },
    });
    // The whole value must match: a pattern is not searched for inside it.
    expect(config.actions.logs!.params.since!.matches.test('1h; reboot')).toBe(false);
    expect(problem('actions: { a: { command: [x, "{day}"] } }')).toBe(
      'actions.a.command: {day} names no parameter of the action (declare it under actions.a.params)',
    );
    expect(
      problem('actions: { a: { command: [x], params: { d: { pattern: "[0-9]+", default: "x" } } } }'),
    ).toBe('actions.a.params.d.default: "x" does not match its pattern [0-9]+');
    expect(problem('actions: { a: { command: [x], params: { d: { pattern: "([" } } } }')).toBe(
      'actions.a.params.d.pattern: is not a valid regular expression',
    );
    expect(problem('actions: { a: { command: [x], outputLimit: 2097152 } }')).toBe(
      'actions.a.outputLimit: is at most 1048576 bytes (1 MiB)',
    );
  });

  it('an empty file is no actions and no probes', () => {
    expect(load('')).toEqual({ actions: {}, probes: {} });
  });

  it('the shipped example (examples/agent/agent.yaml) loads', () => {
    const example = fileURLToPath(new URL('../examples/agent/agent.yaml', import.meta.url));
    const config = loadAgentConfig(example);
    expect(Object.keys(config.actions)).toEqual([
      'reset-accelerator',
      'reboot',
      'diagnostics',
      'logs',
      'driver-upgrade',
    ]);
    expect(config.actions.logs!.params.since).toMatchObject({ pattern: '[0-9]+[smhd]', default: '1h' });
    expect(config.actions.reboot).toMatchObject({ restarts: true });
    expect(config.probes.gpu).toMatchObject({ condition: 'GpuXidError', everyMs: 30_000 });
  });

  it('refuses bad input naming the key: unknown keys, empty commands, bad durations, bad condition types', () => {
    const cases: [string, string][] = [
      ['action: {}', 'action: unknown key'],
      ['actions: { reboot: { command: [a], timeot: 5m } }', 'actions.reboot.timeot: unknown key'],
      [
        'actions: { reboot: { command: [] } }',
        'actions.reboot.command: must name a program: an empty command runs nothing',
      ],
      ['actions: { reboot: { command: [""] } }', 'actions.reboot.command.0: must not be empty'],
      [
        'actions: { reboot: { command: "systemctl reboot" } }',
        'actions.reboot.command: must be a list: the program, then its arguments, e.g. ["nvidia-smi", "-r"]',
      ],
      [
        'actions: { reboot: {} }',
        'actions.reboot.command: must be a list: the program, then its arguments, e.g. ["nvidia-smi", "-r"]',
      ],
      [
        'actions: { reboot: { command: [a], timeout: 5 minutes } }',
        "actions.reboot.timeout: must be a duration such as 30s, 2m or 1h; got '5 minutes'",
      ],
      [
        'actions: { reboot: { command: [a], timeout: 0s } }',
        "actions.reboot.timeout: must be a duration such as 30s, 2m or 1h; got '0s'",
      ],
      [
        'actions: { reboot: { command: [a], restarts: yes please } }',
        'actions.reboot.restarts: must be true or false',
      ],
      [
        'actions: { Reboot: { command: [a] } }',
        'actions.Reboot: is not a valid name: 1–63 of a-z 0-9 -, starting with a letter',
      ],
      ['actions: [reboot]', 'actions: must be a map of action names to their settings'],
      [
        'probes: { gpu: { command: [p], every: soon, condition: GpuXidError } }',
        "probes.gpu.every: must be a duration such as 30s, 2m or 1h; got 'soon'",
      ],
      [
        'probes: { gpu: { command: [p], condition: gpu-xid } }',
        'probes.gpu.condition: must be a condition type such as GpuXidError: a letter, then letters and digits',
      ],
      [
        'probes: { gpu: { command: [p] } }',
        'probes.gpu.condition: must name a condition type such as GpuXidError',
      ],
      [
        'probes: { a: { command: [p], condition: GpuXidError }, b: { command: [q], condition: GpuXidError } }',
        'probes.b.condition: GpuXidError is already probed by probes.a; one probe per condition',
      ],
      ['just words', 'the file: must be a map with actions, probes and inventory'],
      ['actions: { reboot: [', 'not YAML: '],
    ];
    for (const [text, message] of cases) {
      if (message.endsWith(': ')) expect(problem(text), text).toMatch(new RegExp(`^${message}`));
      else expect(problem(text), text).toBe(message);
    }
  });

  it('a file that cannot be read is a usage error', () => {
    expect(() => loadAgentConfig(join(dir, 'missing.yaml'))).toThrow(
      new UsageError(`--config ${join(dir, 'missing.yaml')}: cannot be read (ENOENT)`),
    );
  });
});

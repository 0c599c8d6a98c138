import { describe, expect, it } from 'vitest';
import { helpText, usageLine } from '../cli-kit/help';
import { parseCommandLine, type Invocation } from '../cli-kit/parse';
import type { Env, FlagSpecs } from '../cli-kit/spec';
import type { Command } from './command';
import { UsageError } from './errors';
import { drydock } from './program';

const NODE = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';

const parse = (argv: string[], env?: Env) => parseCommandLine(drydock, argv, env);

function run(argv: string[], env?: Env) {
  const invocation = parse(argv, env);
  if (invocation.kind !== 'run') throw new Error(`expected a command, got ${JSON.stringify(invocation)}`);
  return invocation;
}

function usage(argv: string[], env?: Env): UsageError {
  try {
    parse(argv, env);
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
}

const topicOf = (invocation: Invocation<Command, FlagSpecs>) =>
  invocation.kind === 'help'
    ? { words: invocation.topic.words.join(' '), command: invocation.topic.command?.words.join(' ') }
    : null;

describe('parseCommandLine', () => {
  it('reads operands and typed flags, in either --flag value or --flag=value form', () => {
    const line = run([
      'nodes',
      'drain',
      NODE,
      '--reason',
      'replace PSU',
      '--if-version=7',
      '--wait',
      '--timeout',
      '2h',
    ]);
    expect(line.command.words).toEqual(['nodes', 'drain']);
    expect(line.args).toEqual({ NODE });
    expect(line.flags).toEqual({
      reason: 'replace PSU',
      'if-version': 7,
      'idempotency-key': undefined,
      wait: true,
      timeout: 7_200_000,
    });
  });

  it('takes global flags before the command words and after them', () => {
    expect(run(['--json', '--api', 'http://x:1', 'nodes', 'list', '--token', 's']).globals).toEqual({
      api: 'http://x:1',
      token: 's',
      json: true,
      help: false,
    });
    expect(run(['nodes', 'list']).globals).toEqual({
      api: undefined,
      token: undefined,
      json: false,
      help: false,
    });
    expect(usage(['--reason', 'x', 'nodes', 'list']).message).toBe("unknown flag '--reason'");
    expect(usage(['--api', 'ftp://x', 'nodes', 'list']).message).toBe(
      "--api must be an http(s) URL; got 'ftp://x'",
    );
  });

  it('reads --api and --token from DRYDOCK_API and DRYDOCK_TOKEN unless given; empty is unset', () => {
    const env = { DRYDOCK_API: 'https://api.example:8443/', DRYDOCK_TOKEN: 'from-env' };
    expect(run(['nodes', 'list'], env).globals).toMatchObject({ api: env.DRYDOCK_API, token: 'from-env' });
    expect(run(['nodes', 'list', '--token', 't', '--api=http://y'], env).globals).toMatchObject({
      api: 'http://y',
      token: 't',
    });
    expect(run(['nodes', 'list'], { DRYDOCK_API: '', DRYDOCK_TOKEN: '' }).globals).toMatchObject({
      api: undefined,
      token: undefined,
    });
    expect(usage(['nodes', 'list'], { DRYDOCK_API: 'localhost:8080' }).message).toBe(
      "--api must be an http(s) URL; got 'localhost:8080'",
    );
  });

  it('takes a value that starts with a dash after --, and refuses a forgotten value', () => {
    expect(run(['nodes', 'cordon', '--reason=-', '--', NODE]).flags.reason).toBe('-');
    expect(usage(['nodes', 'cordon', NODE, '--reason', '--if-version', '3']).message).toBe(
      '--reason needs a value (R)',
    );
    expect(usage(['nodes', 'cordon', NODE, '--reason']).message).toBe('--reason needs a value (R)');
  });

  it('refuses unknown flags, repeated flags, extra operands and values on booleans', () => {
    expect(usage(['nodes', 'list', '--deadline', '2h']).message).toBe("unknown flag '--deadline'");
    expect(usage(['nodes', 'drain', NODE, '--deadline', '2h', '--deadline', '3h']).message).toBe(
      '--deadline given twice',
    );
    expect(usage(['nodes', 'list', '-x']).message).toBe("unknown flag '-x'");
    expect(usage(['--json', 'nodes', 'list', '--json']).message).toBe('--json given twice');
    expect(usage(['nodes', 'show', NODE, NODE]).message).toBe(`unexpected argument '${NODE}'`);
    expect(usage(['nodes', 'list', '--all=yes']).message).toBe('--all takes no value');
  });

  it('checks identifiers, numbers, durations, choices and slugs', () => {
    expect(usage(['nodes', 'show', 'NODE_01K5W8V3X9Q2M4N6P8R0S2T4V6']).message).toMatch(
      /^NODE must look like/,
    );
    expect(usage(['nodes', 'show', 'node_01k5w8v3x9q2m4n6p8r0s2t4vu']).message).toMatch(
      /^NODE must look like/,
    );
    expect(usage(['operations', 'show', NODE]).message).toMatch(/^OP must look like op_/);
    for (const bad of ['0', '-1', '1.5', '7x', '']) {
      expect(usage(['nodes', 'cordon', NODE, `--if-version=${bad}`]).helpFor).toBe('nodes cordon');
    }
    expect(usage(['nodes', 'list', '--limit', '51']).message).toBe(
      "--limit must be a whole number 1–50; got '51'",
    );
    expect(usage(['nodes', 'drain', NODE, '--wait', '--timeout', '0']).message).toMatch(
      /^--timeout must be a duration/,
    );
    expect(usage(['nodes', 'list', '--liveness', 'dead']).message).toMatch(
      /^--liveness must be one of alive,/,
    );
    expect(usage(['nodes', 'list', '--pool', 'Pool_A']).message).toMatch(/^--pool must be 1–63 of a-z/);
    expect(usage(['nodes', 'drain', NODE, '--idempotency-key', 'short']).message).toMatch(
      /^--idempotency-key must be 8–128/,
    );
    expect(usage(['nodes', 'cordon', NODE, '--reason', 'x'.repeat(257)]).message).toBe(
      '--reason is at most 256 characters',
    );
  });

  it('refuses --timeout without --wait', () => {
    expect(usage(['operations', 'show', 'op_01k5w8v3x9q2m4n6p8r0s2t4v6', '--timeout', '5m']).message).toBe(
      '--timeout needs --wait',
    );
  });

  it('reads comma-separated lists: trimmed, distinct, each item checked, at most so many', () => {
    expect(run(['nodes', 'taint', NODE, '--add', 'a, b,a', '--remove=c']).flags).toMatchObject({
      add: ['a', 'b'],
      remove: ['c'],
    });
    expect(run(['nodes', 'taint', NODE, '--add', 'rma']).flags.remove).toBeUndefined();
    expect(usage(['nodes', 'taint', NODE, '--add', 'a,,b']).message).toBe(
      "--add has an empty item in 'a,,b'",
    );
    expect(usage(['nodes', 'taint', NODE, '--add=']).message).toBe('--add must not be empty');
    expect(usage(['nodes', 'taint', NODE, '--add', '-rma']).message).toMatch(
      /^--add: '-rma' is not a taint key/,
    );
    const keys = Array.from({ length: 32 }, (_, i) => `k${i}`);
    expect(run(['nodes', 'taint', NODE, '--add', [...keys, 'k0'].join(',')]).flags.add).toEqual(keys);
    expect(
      usage(['nodes', 'label', NODE, '--remove', [...keys, ...keys.map((k) => `x${k}`), 'y'].join(',')])
        .message,
    ).toBe('--remove takes at most 64 items; got 65');
  });

  it('reads KEY=VALUE labels: the value is what follows the first =, and may be empty', () => {
    expect(run(['nodes', 'label', NODE, '--set', 'rack=b7,fabric/rail=3,x=a=b,e=']).flags.set).toEqual([
      'rack=b7',
      'fabric/rail=3',
      'x=a=b',
      'e=',
    ]);
    expect(usage(['nodes', 'label', NODE, '--set', '=b7']).message).toMatch(
      /^--set: '=b7' has a key that is not a label key/,
    );
    expect(usage(['nodes', 'label', NODE, '--set', 'rack=b 7']).message).toMatch(
      /^--set: 'rack=b 7' has a value that is not a label value/,
    );
    expect(usage(['nodes', 'label', NODE, '--set', 'drydock.dev/x=1']).message).toBe(
      "--set: 'drydock.dev/x=1' has a key that is under drydock.dev/, which Drydock reserves",
    );
    expect(usage(['nodes', 'label', NODE, '--set', 'a=1', '--remove', 'a']).message).toBe(
      'a key cannot be set and removed at once: a',
    );
  });

  it('refuses a line without a required flag, naming the flag and its value', () => {
    expect(usage(['token', 'create', '--pool', 'p', '--max-uses', '5']).message).toBe(
      'missing --ttl DURATION',
    );
    expect(usage(['token', 'create', '--pool', 'p', '--ttl', '1h']).message).toBe('missing --max-uses N');
    expect(usage(['token', 'create', '--ttl', '1h', '--max-uses', '5']).helpFor).toBe('token create');
    expect(usage(['nodes', 'block', NODE]).message).toBe('missing --reason R');
    expect(run(['nodes', 'block', NODE, '--reason', 'rma']).flags.reason).toBe('rma');
  });

  it('reads token create: a ttl that parses as a duration (0 never expires), uses ≥ 0, labels repeated', () => {
    const line = run([
      'token',
      'create',
      '--pool',
      'default',
      '--tenant',
      'acme',
      '--ttl',
      '0',
      '--max-uses',
      '0',
      '--label',
      'team=data,rack=b7',
      '--label=site=fra1',
      '--label',
      'team=data',
      '--description',
      'data team laptops',
    ]);
    expect(line.flags).toEqual({
      pool: 'default',
      tenant: 'acme',
      ttl: '0',
      'max-uses': 0,
      label: ['team=data', 'rack=b7', 'site=fra1'],
      description: 'data team laptops',
    });
    const base = ['token', 'create', '--pool', 'p', '--max-uses', '1'];
    expect(run([...base, '--ttl', '1.5d']).flags.ttl).toBe('1.5d');
    for (const bad of ['24', '-1h', 'soon', '1w']) {
      expect(usage([...base, '--ttl', bad]).message).toBe(
        `--ttl must be a duration such as 24h, 30m or 0 (never expires); got '${bad}'`,
      );
    }
    expect(usage([...base, '--ttl', `${'1'.repeat(16)}h`]).message).toBe('--ttl is at most 16 characters');
    expect(usage(['token', 'create', '--pool', 'p', '--ttl', '1h', '--max-uses', '-1']).message).toBe(
      "--max-uses must be a whole number 0–1000000; got '-1'",
    );
    expect(usage([...base, '--ttl', '1h', '--label', 'team=a', '--label', 'team=b']).message).toBe(
      '--label names team twice',
    );
    expect(usage([...base, '--ttl', '1h', '--label', 'team']).message).toBe(
      "--label: 'team' must be KEY=VALUE",
    );
    expect(usage([...base, '--ttl', '1h', '--label', 'a=1', '--label=']).message).toBe(
      '--label must not be empty',
    );
    // Only a repeatable flag may come twice.
    expect(usage([...base, '--ttl', '1h', '--ttl', '2h']).message).toBe('--ttl given twice');
  });

  it('checks the flags of the node access commands', () => {
    expect(run(['nodes', 'approve', NODE, '--pool', 'pool-a', '--if-version', '2']).flags).toEqual({
      pool: 'pool-a',
      'if-version': 2,
    });
    expect(usage(['nodes', 'approve', NODE, '--pool', 'Pool_A']).message).toMatch(/^--pool must be 1–63/);
    expect(usage(['nodes', 'approve', NODE, '--reason', 'x']).message).toBe("unknown flag '--reason'");
    expect(usage(['nodes', 'unblock', NODE, '--if-version', '0']).helpFor).toBe('nodes unblock');
    expect(usage(['nodes', 'revoke-identity', NODE, '--reason', 'x'.repeat(257)]).message).toBe(
      '--reason is at most 256 characters',
    );
    expect(run(['nodes', 'revoke-identity', NODE]).flags).toEqual({
      reason: undefined,
      'if-version': undefined,
    });
    expect(usage(['token', 'create', '--ttl', '24h', '--max-uses', '1']).message).toBe('missing --pool P');
  });

  it('checks a token id operand', () => {
    const id = 'jt_01k5w8v3x9q2m4n6p8r0s2t4v6';
    expect(run(['token', 'revoke', id]).args).toEqual({ ID: id });
    expect(usage(['token', 'revoke', NODE]).message).toBe(
      `ID must look like jt_ followed by 26 lowercase ULID characters, got '${NODE}'`,
    );
    expect(usage(['token', 'revoke']).message).toBe('missing ID');
  });

  it("runs a command's own checks after its flags, pointing at its help", () => {
    const missingYes = usage(['nodes', 'delete', NODE]);
    expect(missingYes.message).toBe('nodes delete removes for good; re-run with --yes');
    expect(missingYes.helpFor).toBe('nodes delete');
    expect(run(['nodes', 'delete', NODE, '--yes']).flags.yes).toBe(true);
    expect(usage(['nodes', 'delete', 'gpu-1', '--yes']).message).toMatch(/^NODE must look like/);
  });

  it('reads a command of three words, and a pool operand', () => {
    const clear = run(['nodes', 'maintenance', 'clear', NODE, '--if-version', '4']);
    expect(clear.command.words).toEqual(['nodes', 'maintenance', 'clear']);
    expect(clear.args).toEqual({ NODE });
    expect(usage(['nodes', 'maintenance', NODE]).message).toBe(
      "unknown command 'nodes maintenance node_01k5w8v3x9q2m4n6p8r0s2t4v6'; one of clear",
    );
    expect(usage(['nodes', 'maintenance']).message).toBe('name a nodes maintenance command: clear');
    expect(usage(['nodes', 'maintenance', 'clear']).helpFor).toBe('nodes maintenance clear');
    expect(topicOf(parse(['nodes', 'maintenance', '--help']))).toEqual({
      words: 'nodes maintenance',
      command: 'nodes maintenance clear',
    });
    expect(run(['pools', 'capacity', 'pool-h100-east']).args).toEqual({ POOL: 'pool-h100-east' });
    expect(usage(['pools', 'show', '9pool']).message).toBe(
      "POOL must be 1–63 of a-z 0-9 -, starting with a letter, got '9pool'",
    );
  });

  it('names the groups and commands it knows when given others', () => {
    expect(usage([]).message).toBe(
      'name a command group: login, logout, whoami, nodes, events, audit, commands, allocations, artifacts, pools, decommission, token, keys, operations, migrate, ca',
    );
    expect(usage(['node', 'list']).message).toBe(
      "unknown command group 'node'; one of login, logout, whoami, nodes, events, audit, commands, allocations, artifacts, pools, decommission, token, keys, operations, migrate, ca",
    );
    expect(usage(['nodes']).helpFor).toBe('nodes');
    expect(usage(['nodes', 'remove', NODE]).message).toMatch(
      /^unknown command 'nodes remove'; one of list, show/,
    );
  });

  it('answers --help for everything, a group, or one command, whatever else the line holds', () => {
    expect(topicOf(parse(['--help']))).toEqual({ words: '', command: undefined });
    expect(topicOf(parse(['nodes', '--help']))).toEqual({ words: 'nodes', command: undefined });
    expect(topicOf(parse(['nodes', 'drain', 'bad-id', '--nope', '-h']))).toEqual({
      words: 'nodes drain',
      command: 'nodes drain',
    });
    expect(topicOf(parse(['--api', 'http://x', '-h', 'nodes']))).toEqual({
      words: 'nodes',
      command: undefined,
    });
  });
});

describe('parseCommandLine: decommission', () => {
  const DIGEST = `sha256:${'0f'.repeat(32)}`;
  const who = ['--operator', 'alice', '--reason', 'EOL'];

  it('reads execute in either form: --generation with --digest, or --from-preview', () => {
    const byFlags = run([
      'decommission',
      'execute',
      NODE,
      '--confirm',
      'gpu-b7-03',
      '--generation',
      '14',
      '--digest',
      DIGEST,
      ...who,
      '--wait',
      '--timeout',
      '10m',
    ]);
    expect(byFlags.command.words).toEqual(['decommission', 'execute']);
    expect(byFlags.flags).toEqual({
      confirm: 'gpu-b7-03',
      generation: 14,
      digest: DIGEST,
      'from-preview': undefined,
      operator: 'alice',
      reason: 'EOL',
      'idempotency-key': undefined,
      wait: true,
      timeout: 600_000,
    });
    const byFile = run([
      'decommission',
      'execute',
      NODE,
      '--from-preview',
      'p.json',
      '--confirm',
      NODE,
      ...who,
    ]);
    expect(byFile.flags).toMatchObject({
      'from-preview': 'p.json',
      generation: undefined,
      digest: undefined,
    });
    expect(run(['decommission', 'preview', NODE, '--json']).globals.json).toBe(true);
  });

  it('refuses both forms, neither, half of one, and a line without confirm, operator or reason', () => {
    const base = ['decommission', 'execute', NODE, '--confirm', 'gpu-b7-03', ...who];
    expect(usage(base).message).toBe(
      "give the preview's --generation G and --digest D, or --from-preview FILE",
    );
    expect(usage([...base, '--from-preview', 'p.json', '--generation', '14']).message).toBe(
      'give --from-preview FILE or --generation G with --digest D, not both',
    );
    expect(usage([...base, '--digest', DIGEST]).message).toBe('--digest needs --generation');
    expect(usage([...base, '--generation', '14']).helpFor).toBe('decommission execute');
    expect(usage([...base, '--generation', '14', '--digest', DIGEST.toUpperCase()]).message).toMatch(
      /^--digest must be the preview's dependencyDigest/,
    );
    const byFile = ['decommission', 'execute', NODE, '--from-preview', 'p.json'];
    expect(usage([...byFile, ...who]).message).toBe('missing --confirm IDENTITY');
    expect(usage([...byFile, '--confirm', NODE, '--reason', 'EOL']).message).toBe('missing --operator O');
    expect(usage([...byFile, '--confirm', NODE, '--operator', 'alice']).message).toBe('missing --reason R');
    expect(usage([...byFile, '--confirm', NODE, ...who, '--operator', 'bob']).message).toBe(
      '--operator given twice',
    );
  });
});

describe('help', () => {
  const help = (argv: string[]) => {
    const invocation = parse(argv);
    if (invocation.kind !== 'help') throw new Error(`expected help, got ${invocation.kind}`);
    return helpText(drydock, invocation.topic);
  };

  it("lists a group's commands, and shows a command's usage, flags and the global flags with their env", () => {
    const nodes = help(['nodes', '--help']);
    expect(nodes).toContain('Usage: drydock nodes COMMAND [arguments] [flags]');
    expect(nodes).toMatch(/^ {2}nodes maintenance clear +Take a node out of maintenance/m);
    expect(nodes).not.toContain('pools list');
    const drain = help(['nodes', 'drain', '-h']);
    expect(drain.split('\n')[0]).toBe(
      `Usage: ${usageLine(
        drydock,
        drydock.commands.find((c) => c.words[1] === 'drain')!,
      )}`,
    );
    expect(drain).toMatch(/^ {2}--timeout DURATION +with --wait: give up waiting/m);
    expect(drain).toMatch(
      /^ {2}--api URL +API base URL \(env DRYDOCK_API; default http:\/\/localhost:8080\)$/m,
    );
    expect(drain).toContain('Exit codes: 0 success, 1 other failure, 2 usage error (nothing sent),');
  });
});

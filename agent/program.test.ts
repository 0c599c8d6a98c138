import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../cli-kit/parse';
import type { Env } from '../cli-kit/spec';
import { UsageError } from './errors';
import { drydockAgent } from './program';

const parse = (argv: string[], env?: Env) => parseCommandLine(drydockAgent, argv, env);

function run(argv: string[], env?: Env) {
  const invocation = parse(argv, env);
  if (invocation.kind !== 'run') throw new Error(`expected a command, got ${JSON.stringify(invocation)}`);
  return invocation;
}

const API = 'http://x';
const join = ['join', '--api', API, '--data-dir', 'd'];

describe('the drydock-agent command line', () => {
  it('reads the command, values given apart or with =, switches, and --json before or after', () => {
    const line = run([
      '--json',
      'join',
      '--api',
      API,
      '--token=ddj_a=b',
      '--data-dir',
      'd',
      '--reset',
      '--yes',
    ]);
    expect(line.command.words).toEqual(['join']);
    expect(line.globals).toEqual({ json: true, help: false });
    expect(line.flags).toMatchObject({ api: API, token: 'ddj_a=b', 'data-dir': 'd', reset: true, yes: true });
    expect(run(['join', `--api=${API}`, '--data-dir', 'd', '--json']).globals.json).toBe(true);
  });

  it('lets --help through without the required flags', () => {
    expect(parse(['join', '--help'])).toMatchObject({ kind: 'help', topic: { words: ['join'] } });
    expect(parse(['-h'])).toMatchObject({ kind: 'help', topic: { words: [], command: undefined } });
  });

  it('takes the join token from DRYDOCK_JOIN_TOKEN unless given; empty is unset', () => {
    expect(run(join, { DRYDOCK_JOIN_TOKEN: 'ddj_env' }).flags.token).toBe('ddj_env');
    expect(run([...join, '--token', 'ddj_flag'], { DRYDOCK_JOIN_TOKEN: 'ddj_env' }).flags.token).toBe(
      'ddj_flag',
    );
    expect(run(join, { DRYDOCK_JOIN_TOKEN: '' }).flags.token).toBeUndefined();
  });

  it('checks the values of run: a heartbeat of at least 100ms, in milliseconds', () => {
    expect(run(['run', '--data-dir', 'd', '--heartbeat-every', '500ms']).flags['heartbeat-every']).toBe(500);
    expect(run(['run', '--data-dir', 'd']).flags['heartbeat-every']).toBeUndefined();
  });

  it.each<[string[], string | RegExp]>([
    [['join'], 'missing --api URL'],
    [['join', '--data-dir', 'd'], 'missing --api URL'],
    [['join', '--api', API], 'missing --data-dir DIR'],
    [['join', '--data-dir', 'd', '--api'], '--api needs a value (URL)'],
    [['join', '--data-dir', 'd', '--api', '--reset'], '--api needs a value (URL)'],
    [[...join, '--api', 'http://y'], '--api given twice'],
    [[...join, '--reset=yes'], '--reset takes no value'],
    [[...join, 'stray'], "unexpected argument 'stray'"],
    [[...join, '--nope'], "unknown flag '--nope'"],
    [[...join, '-t'], "unknown flag '-t'"],
    [['--api', API, 'join'], "unknown flag '--api'"],
    [['join', '--api', 'ftp://x', '--data-dir', 'd'], "--api must be an http(s) URL; got 'ftp://x'"],
    [
      [...join, '--pool', 'Not_A_Pool'],
      "--pool must be 1–63 of a-z 0-9 -, starting with a letter; got 'Not_A_Pool'",
    ],
    [
      [...join, '--reset'],
      '--reset makes this machine a new node and orphans the old one; add --yes to confirm',
    ],
    [
      ['run', '--data-dir', 'd', '--heartbeat-every', '50ms'],
      /^--heartbeat-every must be a duration of at least 100ms/,
    ],
    [['run', '--data-dir', 'd', '--heartbeat-every', 'soon'], /^--heartbeat-every must be a duration/],
    [['stop', '--data-dir'], '--data-dir needs a value (DIR)'],
    [['launch'], "unknown command 'launch'; one of join, run, stop"],
    [[], 'name a command: join, run, stop'],
  ])('refuses %j as a usage error', (argv, message) => {
    let error: unknown;
    try {
      parse(argv);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(UsageError);
    const said = (error as UsageError).message;
    if (typeof message === 'string') expect(said).toBe(message);
    else expect(said).toMatch(message);
    expect((error as UsageError).exitCode).toBe(2);
  });
});

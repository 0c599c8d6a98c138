import { describe, expect, it } from 'vitest';
import { parseArgs, type FlagSpecs } from './args';
import { UsageError } from './errors';

const JOIN: FlagSpecs = {
  api: { type: 'string', value: 'URL', help: '', required: true },
  token: { type: 'string', value: 'SECRET', help: '' },
  reset: { type: 'boolean', help: '' },
};
const parse = (argv: string[]) => parseArgs(argv, (command) => (command === 'join' ? JOIN : undefined));

describe('parseArgs', () => {
  it('reads the command, values given apart or with =, switches, and --json before or after', () => {
    const { command, flags } = parse(['--json', 'join', '--api', 'http://x', '--token=ddj_a=b', '--reset']);
    expect(command).toBe('join');
    expect(Object.fromEntries(flags)).toEqual({ json: true, api: 'http://x', token: 'ddj_a=b', reset: true });
    expect(parse(['join', '--api=http://x', '--json']).flags.get('json')).toBe(true);
  });

  it('lets --help through without the required flags', () => {
    expect(parse(['join', '--help']).flags.get('help')).toBe(true);
    expect(parse(['-h']).command).toBeUndefined();
  });

  it.each([
    [['join']],
    [['join', '--api']],
    [['join', '--api', '--reset']],
    [['join', '--api', 'x', '--api', 'y']],
    [['join', '--api', 'x', '--reset=yes']],
    [['join', '--api', 'x', 'stray']],
    [['join', '--api', 'x', '--nope']],
    [['join', '--api', 'x', '-t']],
    [['--api', 'x', 'join']],
    [['launch']],
  ])('refuses %j as a usage error', (argv) => {
    expect(() => parse(argv)).toThrow(UsageError);
  });
});

import { parseDuration } from '../domain/duration';
import { isId, SLUG_PATTERN } from '../domain/ids';
import type { Command, FlagSpec, FlagSpecs, FlagValues, Operand } from './command';
import { UsageError } from './errors';
import { GLOBAL_FLAGS } from './globals';

/** What a command line asks for: help on something, or one command with checked input. */
export type Invocation =
  | { kind: 'help'; topic: HelpTopic }
  | {
      kind: 'run';
      command: Command;
      args: Record<string, string>;
      flags: FlagValues<FlagSpecs>;
      globals: { api?: string; token?: string; json: boolean };
    };

export type HelpTopic = { group?: string; command?: Command };

/** Flags as given: a value, `true` for a boolean, every value of a repeatable list. */
type RawFlags = Map<string, string | true | string[]>;

/**
 * Reads `drydock [global flags] GROUP COMMAND [operands] [flags]`. Global flags may come anywhere;
 * everything is checked here, so a bad line never reaches the API.
 */
export function parseCommandLine(argv: readonly string[], commands: readonly Command[]): Invocation {
  const leading = readFlags(argv, GLOBAL_FLAGS, { stopAtPositional: true });
  const [group, name, ...rest] = leading.positionals;
  const wantsHelp = leading.flags.has('help');

  if (group === undefined) {
    if (wantsHelp) return { kind: 'help', topic: {} };
    throw new UsageError(`name a command group: ${groupsOf(commands).join(', ')}`);
  }
  const inGroup = commands.filter((c) => c.words[0] === group);
  if (inGroup.length === 0) {
    throw new UsageError(`unknown command group '${group}'; one of ${groupsOf(commands).join(', ')}`);
  }
  const restHasHelp = [name, ...rest].some((t) => t === '--help' || t === '-h');
  const names = [...new Set(inGroup.map((c) => c.words[1]))].join(', ');
  if (name === undefined || name.startsWith('-')) {
    if (wantsHelp || restHasHelp) return { kind: 'help', topic: { group } };
    throw new UsageError(`name a ${group} command: ${names}`, group);
  }
  const named = inGroup.filter((c) => c.words[1] === name);
  if (named.length === 0) throw new UsageError(`unknown command '${group} ${name}'; one of ${names}`, group);

  // A command of three words (`nodes maintenance clear`) takes its third word from what follows.
  let command = named.find((c) => c.words.length === 2);
  let tail = rest;
  if (!command) {
    const [sub, ...after] = rest;
    const subs = named.map((c) => c.words[2]).join(', ');
    if (sub === undefined || sub.startsWith('-')) {
      if (wantsHelp || restHasHelp) {
        return { kind: 'help', topic: named.length === 1 ? { group, command: named[0] } : { group } };
      }
      throw new UsageError(`name a ${group} ${name} command: ${subs}`, group);
    }
    command = named.find((c) => c.words[2] === sub);
    if (!command) throw new UsageError(`unknown command '${group} ${name} ${sub}'; one of ${subs}`, group);
    tail = after;
  }
  const helpFor = command.words.join(' ');
  if (wantsHelp || restHasHelp) return { kind: 'help', topic: { group, command } };

  const specs: FlagSpecs = { ...GLOBAL_FLAGS, ...command.flags };
  const parsed = withHelp(helpFor, () => readFlags(tail, specs, { stopAtPositional: false }));
  for (const [flag, value] of leading.flags) {
    if (parsed.flags.has(flag)) throw new UsageError(`--${flag} given twice`, helpFor);
    parsed.flags.set(flag, value);
  }
  const args = withHelp(helpFor, () => checkOperands(command.operands, parsed.positionals));
  const flags = withHelp(helpFor, () => checkFlags(command.flags, parsed.flags));
  const { check } = command;
  if (check) withHelp(helpFor, () => check({ args, flags }));
  const globals = {
    api: stringFlag(parsed.flags, 'api'),
    token: stringFlag(parsed.flags, 'token'),
    json: parsed.flags.has('json'),
  };
  return { kind: 'run', command, args, flags, globals };
}

function groupsOf(commands: readonly Command[]): string[] {
  return [...new Set(commands.map((c) => c.words[0]))];
}

/** Runs `read`, pointing any usage error it throws at the help of `helpFor`. */
function withHelp<T>(helpFor: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof UsageError && error.helpFor === undefined)
      throw new UsageError(error.message, helpFor);
    throw error;
  }
}

/** Splits tokens into flags (by name, as given) and positionals; refuses unknown flags. */
function readFlags(
  tokens: readonly string[],
  specs: FlagSpecs,
  options: { stopAtPositional: boolean },
): { flags: RawFlags; positionals: string[] } {
  const flags: RawFlags = new Map();
  const positionals: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token === '--') {
      positionals.push(...tokens.slice(i + 1));
      break;
    }
    if (token === '-h') {
      flags.set('help', true);
      continue;
    }
    if (!token.startsWith('-') || token === '-') {
      if (options.stopAtPositional) {
        positionals.push(...tokens.slice(i));
        break;
      }
      positionals.push(token);
      continue;
    }
    if (!token.startsWith('--')) throw new UsageError(`unknown flag '${token}'`);
    const eq = token.indexOf('=');
    const name = token.slice(2, eq === -1 ? undefined : eq);
    const spec = specs[name];
    if (!spec) throw new UsageError(`unknown flag '--${name}'`);
    const repeatable = spec.type === 'list' && spec.repeatable === true;
    if (flags.has(name) && !repeatable) throw new UsageError(`--${name} given twice`);
    if (spec.type === 'boolean') {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    let value: string | undefined;
    if (eq !== -1) {
      value = token.slice(eq + 1);
    } else {
      value = tokens[i + 1];
      // `--reason --wait` is a forgotten value far more often than a reason that starts with --.
      if (value === undefined || value.startsWith('--')) {
        throw new UsageError(`--${name} needs a value (${spec.value})`);
      }
      i++;
    }
    if (repeatable) {
      const earlier = flags.get(name);
      flags.set(name, [...(Array.isArray(earlier) ? earlier : []), value]);
    } else {
      flags.set(name, value);
    }
  }
  return { flags, positionals };
}

function stringFlag(flags: RawFlags, name: string): string | undefined {
  const value = flags.get(name);
  return typeof value === 'string' ? value : undefined;
}

/** What each kind of operand must look like, said when it does not. */
const OPERAND_FORMS: Record<Operand['type'], { test(value: string): boolean; form: string }> = {
  node: {
    test: (value) => isId('node', value),
    form: 'look like node_ followed by 26 lowercase ULID characters',
  },
  op: { test: (value) => isId('op', value), form: 'look like op_ followed by 26 lowercase ULID characters' },
  pool: { test: (value) => SLUG_PATTERN.test(value), form: 'be 1–63 of a-z 0-9 -, starting with a letter' },
  token: {
    test: (value) => isId('jt', value),
    form: 'look like jt_ followed by 26 lowercase ULID characters',
  },
  key: {
    test: (value) => isId('key', value),
    form: 'look like key_ followed by 26 lowercase ULID characters',
  },
};

function checkOperands(operands: readonly Operand[], positionals: string[]): Record<string, string> {
  const args: Record<string, string> = {};
  operands.forEach((operand, index) => {
    const value = positionals[index];
    if (value === undefined) throw new UsageError(`missing ${operand.name}`);
    const { test, form } = OPERAND_FORMS[operand.type];
    if (!test(value)) throw new UsageError(`${operand.name} must ${form}, got '${value}'`);
    args[operand.name] = value;
  });
  const extra = positionals.slice(operands.length);
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
  return args;
}

function checkFlags(specs: FlagSpecs, raw: RawFlags): FlagValues<FlagSpecs> {
  const flags: Record<string, string | string[] | number | boolean | undefined> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const value = raw.get(name);
    if (spec.requires && value !== undefined && !raw.has(spec.requires)) {
      throw new UsageError(`--${name} needs --${spec.requires}`);
    }
    if (value === undefined && spec.required) {
      throw new UsageError(`missing --${name}${spec.type === 'boolean' ? '' : ` ${spec.value}`}`);
    }
    flags[name] =
      spec.type === 'boolean'
        ? value === true
        : value === undefined
          ? undefined
          : Array.isArray(value) && spec.type === 'list'
            ? checkList(name, spec, value)
            : checkValue(name, spec, String(value));
  }
  return flags as FlagValues<FlagSpecs>;
}

/** One flag value, converted to what its handler gets. */
export function checkValue(
  name: string,
  spec: FlagSpec,
  value: string,
): string | string[] | number | boolean {
  switch (spec.type) {
    case 'boolean':
      return true;
    case 'string':
      if (value === '') throw new UsageError(`--${name} must not be empty`);
      if (spec.choices && !spec.choices.includes(value)) {
        throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')}; got '${value}'`);
      }
      if ((spec.pattern && !spec.pattern.test(value)) || (spec.accepts && !spec.accepts(value))) {
        throw new UsageError(
          `--${name} must be ${spec.patternHint ?? `like ${spec.pattern}`}; got '${value}'`,
        );
      }
      if (spec.maxLength !== undefined && value.length > spec.maxLength) {
        throw new UsageError(`--${name} is at most ${spec.maxLength} characters`);
      }
      return value;
    case 'list':
      return checkList(name, spec, [value]);
    case 'integer': {
      const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
      const range = spec.max === undefined ? `≥ ${spec.min}` : `${spec.min}–${spec.max}`;
      if (Number.isNaN(n) || n < spec.min || (spec.max !== undefined && n > spec.max)) {
        throw new UsageError(`--${name} must be a whole number ${range}; got '${value}'`);
      }
      return n;
    }
    case 'duration': {
      const ms = parseDuration(value);
      if (ms === null || ms <= 0) {
        throw new UsageError(`--${name} must be a duration such as 90s, 10m or 2h; got '${value}'`);
      }
      return ms;
    }
  }
}

/** The comma-separated items of every value a list flag was given: trimmed, distinct, checked. */
function checkList(
  name: string,
  spec: Extract<FlagSpec, { type: 'list' }>,
  values: readonly string[],
): string[] {
  const items: string[] = [];
  for (const value of values) {
    if (value.trim() === '') throw new UsageError(`--${name} must not be empty`);
    const split = value.split(',').map((item) => item.trim());
    if (split.includes('')) throw new UsageError(`--${name} has an empty item in '${value}'`);
    items.push(...split);
  }
  const distinct = [...new Set(items)];
  if (distinct.length > spec.maxItems) {
    throw new UsageError(`--${name} takes at most ${spec.maxItems} items; got ${distinct.length}`);
  }
  for (const item of distinct) {
    const problem = spec.checkItem?.(item);
    if (problem) throw new UsageError(`--${name}: '${item}' ${problem}`);
  }
  return distinct;
}

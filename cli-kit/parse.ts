import { parseArgs } from 'node:util';
import type { CommandDef, Env, FlagSpecs, FlagValues, Program } from './spec';
import { UsageError } from './usage-error';
import { checkFlags, checkOperands, type RawFlags } from './values';

/** Help on the commands under some words (none: all of them), or on one command. */
export type HelpTopic<C extends CommandDef> = { words: readonly string[]; command?: C };

/** What a command line asks for: help on something, or one command with checked input. */
export type Invocation<C extends CommandDef, G extends FlagSpecs> =
  | { kind: 'help'; topic: HelpTopic<C> }
  | {
      kind: 'run';
      command: C;
      args: Record<string, string>;
      flags: FlagValues<FlagSpecs>;
      globals: FlagValues<G>;
    };

type Token = ReturnType<typeof tokensOf>[number];

/**
 * Reads `NAME [global flags] WORDS… [operands] [flags]`. Global flags may come anywhere, other
 * flags after the words; `--help` or `-h` anywhere asks for help. Everything is checked here, so a
 * bad line never reaches the API.
 */
export function parseCommandLine<C extends CommandDef, G extends FlagSpecs>(
  program: Program<C, G>,
  argv: readonly string[],
  env: Env = {},
): Invocation<C, G> {
  const wantsHelp = argv.some((t) => t === '--help' || t === '-h');
  const raw: RawFlags = new Map();
  // Before the words, only global flags: they decide where the words start.
  const leading = tokensOf(argv, program.globals);
  const first = leading.find((t) => t.kind === 'positional');
  for (const token of leading) {
    if (token === first) break;
    if (token.kind === 'option') collect(token, program.globals, raw);
  }

  let at = first?.index ?? argv.length;
  const words: string[] = [];
  let named = program.commands;
  let command: C | undefined;
  while (!(command = named.find((c) => c.words.length === words.length))) {
    const depth = words.length;
    const choices = [...new Set(named.map((c) => c.words[depth]))].join(', ');
    const helpFor = words.join(' ') || undefined;
    const word = argv[at];
    if (word === undefined || word.startsWith('-')) {
      if (wantsHelp) {
        // `nodes maintenance --help` is about its one command; `nodes --help` about the group.
        const only = depth >= 2 && named.length === 1 ? named[0] : undefined;
        return { kind: 'help', topic: { words, command: only } };
      }
      const what = depth === 0 ? program.firstWord : `${helpFor} command`;
      throw new UsageError(`name a ${what}: ${choices}`, helpFor);
    }
    const next = named.filter((c) => c.words[depth] === word);
    if (next.length === 0) {
      const what = depth === 0 ? `${program.firstWord} '${word}'` : `command '${helpFor} ${word}'`;
      throw new UsageError(`unknown ${what}; one of ${choices}`, helpFor);
    }
    words.push(word);
    named = next;
    at++;
  }
  if (wantsHelp) return { kind: 'help', topic: { words, command } };

  const found = command;
  const helpFor = words.join(' ');
  try {
    const specs: FlagSpecs = { ...program.globals, ...found.flags };
    const positionals: string[] = [];
    for (const token of tokensOf(argv.slice(at), specs)) {
      if (token.kind === 'positional') positionals.push(token.value);
      else if (token.kind === 'option') collect(token, specs, raw);
    }
    for (const [name, spec] of Object.entries(specs)) {
      const fromEnv = spec.env === undefined ? undefined : env[spec.env];
      if (!raw.has(name) && fromEnv) raw.set(name, fromEnv);
    }
    const args = checkOperands(found.operands, positionals);
    const flags = checkFlags(found.flags, raw);
    found.check?.({ args, flags });
    return { kind: 'run', command: found, args, flags, globals: checkFlags(program.globals, raw) };
  } catch (error) {
    // A refusal of this command's input points at this command's help.
    if (error instanceof UsageError && error.helpFor === undefined) {
      throw new UsageError(error.message, helpFor);
    }
    throw error;
  }
}

/**
 * `node:util`'s reader of the line, not strict: the checks in `collect` refuse what it lets through
 * and say why in the words of this project's messages.
 */
function tokensOf(args: readonly string[], specs: FlagSpecs) {
  const options = Object.fromEntries(
    Object.entries(specs).map(([name, spec]) => [
      name,
      {
        type: spec.type === 'boolean' ? ('boolean' as const) : ('string' as const),
        ...(name === 'help' ? { short: 'h' } : {}),
      },
    ]),
  );
  return parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true }).tokens;
}

/** Adds one flag as given to `raw`; refuses an unknown flag, a repeat, a missing or extra value. */
function collect(token: Extract<Token, { kind: 'option' }>, specs: FlagSpecs, raw: RawFlags): void {
  const { name } = token;
  const spec = Object.hasOwn(specs, name) ? specs[name] : undefined;
  if (!spec) throw new UsageError(`unknown flag '${token.rawName}'`);
  const repeatable = spec.type === 'list' && spec.repeatable === true;
  if (raw.has(name) && !repeatable) throw new UsageError(`--${name} given twice`);
  if (spec.type === 'boolean') {
    if (token.value !== undefined) throw new UsageError(`--${name} takes no value`);
    raw.set(name, true);
    return;
  }
  const { value } = token;
  // `--reason --wait` is a forgotten value far more often than a reason that starts with --.
  if (value === undefined || (!token.inlineValue && value.startsWith('--'))) {
    throw new UsageError(`--${name} needs a value (${spec.value})`);
  }
  if (repeatable) {
    const earlier = raw.get(name);
    raw.set(name, [...(Array.isArray(earlier) ? earlier : []), value]);
  } else {
    raw.set(name, value);
  }
}

import type { HelpTopic } from './parse';
import type { CommandDef, FlagSpec, FlagSpecs, Program } from './spec';

/** `--reason R`, `--wait`. */
export const flagLabel = (name: string, spec: FlagSpec) =>
  spec.type === 'boolean' ? `--${name}` : `--${name} ${spec.value}`;

/** What help says after a flag's own words: its choices, its env variable, its default. */
export function flagNotes(spec: FlagSpec): string[] {
  return [
    spec.type === 'string' && spec.choices ? `one of ${spec.choices.join(', ')}` : '',
    spec.env ? `env ${spec.env}` : '',
    spec.default ? `default ${spec.default}` : '',
  ].filter(Boolean);
}

/** `drydock nodes drain NODE [--reason R] [--wait]`; a required flag has no brackets, a repeatable one `...`. */
export function usageLine(program: Pick<Program, 'name'>, command: CommandDef): string {
  const flags = Object.entries(command.flags).map(([name, spec]) => {
    const label = spec.required ? flagLabel(name, spec) : `[${flagLabel(name, spec)}]`;
    return spec.type === 'list' && spec.repeatable ? `${label}...` : label;
  });
  return [program.name, ...command.words, ...command.operands.map((o) => o.name), ...flags].join(' ');
}

/** `drydock GROUP COMMAND [arguments] [flags]`, or under some words `drydock nodes COMMAND …`. */
export function synopsis(program: Program, words: readonly string[] = []): string {
  const listed = program.commands.filter((c) => words.every((w, i) => c.words[i] === w));
  const placeholders = words.length > 0 ? [...words, 'COMMAND'] : placeholderWords(program);
  const operands = listed.some((c) => c.operands.length > 0) ? ' [arguments]' : '';
  return `${program.name} ${placeholders.join(' ')}${operands} [flags]`;
}

/** `GROUP COMMAND` when commands have two or more words, else `COMMAND`. */
const placeholderWords = (program: Program) =>
  program.commands.some((c) => c.words.length > 1) ? ['GROUP', 'COMMAND'] : ['COMMAND'];

/** `Exit codes: 0 success, 1 other failure, …`. */
export const exitCodeLine = (program: Program) =>
  `Exit codes: ${program.exitCodes.map(([code, meaning]) => `${code} ${meaning}`).join(', ')}.`;

/** The help text of a topic: everything, the commands under some words, or one command. */
export function helpText<C extends CommandDef>(program: Program<C>, topic: HelpTopic<C>): string {
  const globals = `Global flags:\n${flagTable(program.globals)}`;
  const { command, words } = topic;
  if (command) {
    const sections = [`Usage: ${usageLine(program, command)}`, command.summary];
    if (Object.keys(command.flags).length > 0) sections.push(`Flags:\n${flagTable(command.flags)}`);
    sections.push(globals, exitCodeLine(program));
    return sections.join('\n\n');
  }
  const listed = program.commands.filter((c) => words.every((w, i) => c.words[i] === w));
  const more = placeholderWords(program).join(' ');
  const hasOperands = program.commands.some((c) => c.operands.length > 0);
  return [
    `${program.name}: ${program.about}.`,
    `Usage: ${synopsis(program, words)}`,
    `Commands:\n${columns(listed.map((c) => [c.words.join(' '), c.summary]))}`,
    globals,
    exitCodeLine(program),
    `Run '${program.name} ${more} --help' for a command's ${hasOperands ? 'arguments and ' : ''}flags.`,
  ].join('\n\n');
}

function flagTable(specs: FlagSpecs): string {
  return columns(
    Object.entries(specs).map(([name, spec]) => {
      const notes = flagNotes(spec);
      return [flagLabel(name, spec), notes.length > 0 ? `${spec.help} (${notes.join('; ')})` : spec.help];
    }),
  );
}

/** Two columns, indented, the first padded to its widest cell. */
function columns(rows: readonly (readonly [string, string])[]): string {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`.trimEnd()).join('\n');
}

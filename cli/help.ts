import type { HelpTopic } from './args';
import type { Command, FlagSpec, FlagSpecs } from './command';
import { GLOBAL_FLAGS } from './globals';
import { table } from './output';

const EXIT_CODES =
  'Exit codes: 0 success, 1 other failure, 2 usage error (nothing sent), 3 CONFLICT/INVALID_STATE/' +
  'NOT_SCHEDULABLE,\n4 NOT_FOUND, 5 UNAUTHENTICATED/FORBIDDEN.';

const flagLabel = (name: string, spec: FlagSpec) =>
  spec.type === 'boolean' ? `--${name}` : `--${name} ${spec.value}`;

function flagTable(specs: FlagSpecs): string {
  return indent(
    table(
      ['', ''],
      Object.entries(specs).map(([name, spec]) => {
        const choices = spec.type === 'string' && spec.choices ? ` (${spec.choices.join(', ')})` : '';
        return [flagLabel(name, spec), spec.help + choices];
      }),
    )
      .split('\n')
      .slice(1)
      .join('\n'),
  );
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');

/** `drydock nodes drain NODE [--reason R] [--wait]`; a required flag has no brackets, a repeatable one `...`. */
export function usageLine(command: Command): string {
  const flags = Object.entries(command.flags).map(([name, spec]) => {
    const label = spec.required ? flagLabel(name, spec) : `[${flagLabel(name, spec)}]`;
    return spec.type === 'list' && spec.repeatable ? `${label}...` : label;
  });
  return ['drydock', ...command.words, ...command.operands.map((o) => o.name), ...flags].join(' ');
}

function commandList(commands: readonly Command[]): string {
  return indent(
    table(
      ['', ''],
      commands.map((c) => [c.words.join(' '), c.summary]),
    )
      .split('\n')
      .slice(1)
      .join('\n'),
  );
}

/** The help text of a topic: everything, one group, or one command. */
export function helpText(topic: HelpTopic, commands: readonly Command[]): string {
  const { command, group } = topic;
  if (command) {
    const sections = [`Usage: ${usageLine(command)}`, command.summary];
    if (Object.keys(command.flags).length > 0) sections.push(`Flags:\n${flagTable(command.flags)}`);
    sections.push(`Global flags:\n${flagTable(GLOBAL_FLAGS)}`, EXIT_CODES);
    return sections.join('\n\n');
  }
  const listed = group ? commands.filter((c) => c.words[0] === group) : commands;
  return [
    'drydock: the command line of the Drydock API.',
    `Usage: drydock ${group ?? 'GROUP'} COMMAND [arguments] [flags]`,
    `Commands:\n${commandList(listed)}`,
    `Global flags:\n${flagTable(GLOBAL_FLAGS)}`,
    EXIT_CODES,
    "Run 'drydock GROUP COMMAND --help' for a command's arguments and flags.",
  ].join('\n\n');
}

import { flagLabel, synopsis, usageLine } from './help';
import type { CommandDef, FlagSpec, FlagSpecs, Program } from './spec';
import { integerRange, OPERAND_FORMS } from './values';

/**
 * The Markdown reference of a program, from the same table as its help: usage, global flags,
 * exit codes, then every command with its operands and flags.
 */
export function referenceOf(program: Program): string {
  const { name } = program;
  return [
    `## ${name}`,
    `${capitalize(program.about)}. Usage: \`${synopsis(program)}\`; \`${name} --help\`, \`${name} ${program.commands.some((c) => c.words.length > 1) ? 'GROUP ' : ''}--help\` and \`${name} … COMMAND --help\` print the same as this page.`,
    `### ${name}: global flags`,
    `Every command takes these${program.commands.some((c) => c.words.length > 1) ? ', before or after its words' : ''}; before the command, only these may come.`,
    flagTable(program.globals),
    `### ${name}: exit codes`,
    table(
      ['Code', 'Meaning'],
      program.exitCodes.map(([code, meaning]) => [String(code), meaning]),
    ),
    `### ${name}: commands`,
    table(
      ['Command', 'What it does'],
      program.commands.map((c) => [`[${c.words.join(' ')}](#${anchor(program, c)})`, c.summary]),
    ),
    ...program.commands.map((c) => commandSection(program, c)),
  ].join('\n\n');
}

function commandSection(program: Program, command: CommandDef): string {
  const sections = [
    `#### ${program.name} ${command.words.join(' ')}`,
    `${capitalize(command.summary)}.`.replace(/\.\.$/, '.'),
    `\`\`\`\n${usageLine(program, command)}\n\`\`\``,
  ];
  if (command.operands.length > 0) {
    sections.push(
      table(
        ['Operand', 'Must'],
        command.operands.map((o) => [`\`${o.name}\``, OPERAND_FORMS[o.type].form]),
      ),
    );
  }
  if (Object.keys(command.flags).length > 0) sections.push(flagTable(command.flags));
  return sections.join('\n\n');
}

function flagTable(specs: FlagSpecs): string {
  return table(
    ['Flag', 'Value', 'Required', 'Default', 'Meaning'],
    Object.entries(specs).map(([name, spec]) => [
      `\`${flagLabel(name, spec)}\``,
      valueOf(spec),
      spec.required ? 'yes' : spec.requires ? `with \`--${spec.requires}\`` : '',
      [spec.env ? `\`$${spec.env}\`` : '', spec.default ?? ''].filter(Boolean).join(', else '),
      spec.help,
    ]),
  );
}

/** What a flag's value must be, in words. */
function valueOf(spec: FlagSpec): string {
  switch (spec.type) {
    case 'boolean':
      return 'none (a switch)';
    case 'string': {
      const rule = spec.choices
        ? `one of ${spec.choices.map((c) => `\`${c}\``).join(', ')}`
        : (spec.patternHint ?? (spec.pattern ? `like \`${spec.pattern}\`` : 'text'));
      return spec.maxLength === undefined ? rule : `${rule}, ≤ ${spec.maxLength} characters`;
    }
    case 'integer':
      return `whole number ${integerRange(spec)}`;
    case 'list':
      return `${spec.whole ? 'text, commas kept' : 'comma-separated'}, ≤ ${spec.maxItems} distinct items${spec.repeatable ? '; repeatable' : ''}`;
    case 'duration':
      return `duration such as 90s, 10m, 2h${spec.min === undefined ? '' : `, ≥ ${spec.min}ms`}`;
  }
}

/** GitHub's anchor of the command's heading. */
const anchor = (program: Program, command: CommandDef) =>
  `${program.name} ${command.words.join(' ')}`
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

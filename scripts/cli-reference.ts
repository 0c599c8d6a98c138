import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { drydockAgent } from '../agent/program';
import { drydockBridge } from '../bridges/program';
import { referenceOf } from '../cli-kit/reference';
import { drydock } from '../cli/program';

/** Where the reference lives, and the command that writes it. */
export const CLI_REFERENCE = fileURLToPath(new URL('../docs/cli.md', import.meta.url));
export const CLI_REFERENCE_COMMAND = 'npm run docs:cli';

const INTRO = `# Command-line reference: drydock, drydock-agent and drydock-bridge

<!-- Written by \`${CLI_REFERENCE_COMMAND}\` (scripts/cli-reference.ts) from the command definitions in
cli/commands/, cli/globals.ts, agent/ and bridges/: change those, then run it; a test fails while this page differs. -->

\`drydock\` is the operator's command line of the Drydock API; \`drydock-agent\` runs on each node
(see [the agent guide](agent.md)); \`drydock-bridge\` keeps a scheduler in step with Drydock (see
[the Slurm bridge](bridges/slurm.md)). All three check the whole line before they do anything: a bad line
is refused with exit code 2 and a pointer to the help to read (\`run 'drydock nodes drain --help'
for usage\`), and nothing is sent. The help they print comes from the same definitions as this page.

With \`--json\`, \`drydock\` prints the API's JSON on stdout and nothing else; errors go to stderr
as \`error: CODE: message\`, and the exit code says what kind of failure it was
([errors](api.md)).`;

/** docs/cli.md as the definitions have it, formatted as the repository formats Markdown. */
export async function cliReference(): Promise<string> {
  const markdown = [INTRO, referenceOf(drydock), referenceOf(drydockAgent), referenceOf(drydockBridge)].join(
    '\n\n',
  );
  const options = await resolveConfig(CLI_REFERENCE);
  return format(markdown, { ...options, parser: 'markdown' });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(CLI_REFERENCE, await cliReference());
  // A generator's report of what it wrote is its output for the person who ran it, not a log line.
  process.stdout.write(`wrote ${CLI_REFERENCE}\n`);
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { drydockAgent } from '../agent/program';
import { drydock } from '../cli/program';
import { CLI_REFERENCE, CLI_REFERENCE_COMMAND, cliReference } from './cli-reference';

describe('docs/cli.md', () => {
  it('is what the command definitions of drydock and drydock-agent generate', async () => {
    const written = readFileSync(CLI_REFERENCE, 'utf8');
    // The message says what to run; the diff under it, what changed.
    expect(written, `docs/cli.md is out of date: run '${CLI_REFERENCE_COMMAND}'`).toBe(await cliReference());
  });

  it('has a section for every command, and names the global flags and their environment', async () => {
    const page = await cliReference();
    for (const program of [drydock, drydockAgent]) {
      for (const command of program.commands) {
        expect(page).toContain(`\n#### ${program.name} ${command.words.join(' ')}\n`);
      }
    }
    for (const name of [
      '`--json`',
      '`--api URL`',
      '`$DRYDOCK_API`',
      '`$DRYDOCK_TOKEN`',
      '`$DRYDOCK_JOIN_TOKEN`',
    ]) {
      expect(page).toContain(name);
    }
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { clientSchemaSource, GENERATE_COMMAND, SCHEMA_FILE } from '../scripts/client-schema';

describe('packages/client/src/schema.ts', () => {
  it('is what the current routes generate', async () => {
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    const generated = await clientSchemaSource();
    expect(
      committed === generated,
      `packages/client/src/schema.ts differs from the API's OpenAPI document: run \`${GENERATE_COMMAND}\` and commit it`,
    ).toBe(true);
  });
});

import { defineConfig } from 'vitest/config';

const EXCLUDE = ['node_modules/**', '.drydock/**', 'dist/**'];

/**
 * The unit tier (`npm run test:unit`): test files that start no Postgres, no Temporal, no browser
 * and no Drydock program — every `*.test.ts` next to its code, and these few under `test/`. Every
 * other file is the integration tier, which the global setup's services serve. `npm test` runs both.
 */
const UNIT_TESTS = [
  '*.test.ts',
  '!(test|node_modules|dist)/**/*.test.ts',
  'test/api-client.test.ts',
  'test/client-schema.test.ts',
  'test/compose.test.ts',
  'test/docs.test.ts',
  'test/openapi-contract.test.ts',
];

export default defineConfig({
  test: {
    // The Temporal native module crashes under worker threads: run each file in its own process.
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Worker threads start faster than processes (a third less CPU for this tier); no unit test
        // loads the Temporal native module that crashes under them.
        test: { name: 'unit', include: UNIT_TESTS, exclude: EXCLUDE, pool: 'threads' },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          // Runs only when a file of this tier does: one Temporal dev server and a migrated template database.
          globalSetup: ['./test/support/global-setup.ts'],
          include: ['**/*.test.ts'],
          exclude: [...EXCLUDE, ...UNIT_TESTS],
        },
      },
    ],
  },
});

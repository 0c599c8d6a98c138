import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal native module crashes under worker threads: run each file in its own process.
    pool: 'forks',
    globalSetup: ['./test/support/global-setup.ts'],
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', '.drydock/**', 'dist/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});

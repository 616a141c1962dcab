import { defineConfig } from 'vitest/config';

/** `npm run test:chaos`: the reliability suite, apart from `npm test` (it owns a Redis and kills processes). */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    testTimeout: 5 * 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    // The databases of test/helpers/database.ts, as in `npm test`.
    globalSetup: ['test/postgres-template.ts'],
  },
});

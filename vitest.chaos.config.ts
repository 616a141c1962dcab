import { defineConfig } from 'vitest/config';

/**
 * `npm run test:chaos`: the reliability suite, apart from `npm test` (it owns a Redis and kills
 * processes). It runs once per engine, SQLite then PostgreSQL, one after the other (about a
 * minute each on an idle 2-core host). A test's deadline is far above that, for a host busy with
 * more than the suite; its own waits fail sooner, each naming what it waited for.
 */
export default defineConfig({
  test: {
    include: ['test/chaos/**/*.test.ts'],
    testTimeout: 8 * 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    // The databases of test/helpers/database.ts, as in `npm test`.
    globalSetup: ['test/postgres-template.ts'],
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The chaos suite has its own command (npm run test:chaos), which .ci/run also runs.
    exclude: ['test/chaos/**', 'node_modules/**'],
    // Integration tests share one Redis; each uses its own key prefix, so files may run in parallel.
    // A test that runs several commands as child processes (each opens the database and Redis)
    // takes 10 to 25 s here when the host is quiet: room for a busy one. Tests wait on conditions.
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one fork fewer than the cores: one on a 2-core machine, where the
    // integration files spend most of their time waiting for the sandbox, a child process or
    // a timer. Three at a time keep both cores busy.
    maxWorkers: 3,
    // Fails the run when a test left keys under a prefix it made (test/redis-keys-guard.ts), or a
    // PostgreSQL database; makes the run's PostgreSQL template once (test/postgres-template.ts).
    globalSetup: ['test/redis-keys-guard.ts', 'test/postgres-template.ts'],
  },
});

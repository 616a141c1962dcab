import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/sequencer.js';

// The tests run the same whatever the caller's shell holds. What a shell may have set for a
// deployment (REALTY_PREFIX from the demo's hints, LOG_LEVEL, DATABASE_URL) or its locale (the
// language of the files for a person) is dropped here, before the test processes are made, so
// neither the tests nor the commands they start see it. REDIS_URL stays: it says where the
// tests' Redis is. Tests give what they mean (test/helpers/cli.ts childEnv).
for (const name of Object.keys(process.env)) {
  if (/^REALTY_(?!TEST_)/.test(name) || ['LOG_LEVEL', 'DATABASE_URL', 'LC_ALL', 'LC_MESSAGES'].includes(name)) delete process.env[name];
}
process.env.LANG = 'C.UTF-8';

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
    // A test process runs file after file with the modules it imported kept: each file no longer
    // imports the project again (about 100 s of CPU a run here, a quarter of the suite). Tests
    // share no state through modules: each makes its own Redis prefix, database, sandbox and
    // logger, and watches V8 or the clock through what it is given, not by mocking a module.
    isolate: false,
    // Vitest's default is one fork fewer than the cores: one on a 2-core machine, where the
    // integration files spend most of their time waiting for the sandbox, a child process or
    // a timer. Four at a time keep both cores busy: 225 and 231 s here against 260 and 261 s
    // with three, on 2026-11-29 (docs/development.md).
    maxWorkers: 4,
    // The longest files first, on a fresh clone too (test/durations.json).
    sequence: { sequencer: LongestFirst },
    // Fails the run when a test left keys under a prefix it made (test/redis-keys-guard.ts), or a
    // PostgreSQL database; makes the run's PostgreSQL template once (test/postgres-template.ts).
    globalSetup: ['test/redis-keys-guard.ts', 'test/postgres-template.ts'],
  },
});

/**
 * One setup for the integration tests: a vitest `test` whose context gives what a test used to
 * make by hand in its hooks, each made only when the test names it and cleaned up after:
 *
 * - `prefix`: a Redis key prefix of the test's own (its keys deleted after), `keys` its key names;
 *   `openPrefix(label?)` another, for a test that needs several (each deleted after the test);
 * - `redis`: an ioredis client (disconnected after);
 * - `db`: a migrated database of its own, SQLite unless told (dropped after), as `useTestDatabase` gives it;
 *   `openDatabase(engine?)` another, for a test that needs several (each dropped after the test, or when it drops it);
 * - `dir`: a temporary folder (removed after);
 * - `sandbox`: the gateway's emulator on a free port (closed after);
 * - `openSandbox(options?)`: for a test that starts its sandbox itself, with options of its own
 *   (several tests of a file, each another kind): each it starts closed after the test;
 * - `profile`: the samples' bank profile;
 * - `env`: what a CLI child is given (test/helpers/cli.ts): the Redis, database, gateway, session and prefix above.
 *
 * `harness()` makes them for each test; `harness({ per: 'file' })` once for the file's tests,
 * which share them as the tests that opened them in `beforeAll` did (`each` keeps some for each
 * test, a database as `useTestDatabase()` gave it). What a file sets up once besides (a run the
 * tests read) it does in `it.beforeAll(({ sandbox, env }) => …)`, which gets the per-file
 * fixtures. A file's own `afterAll`/`afterEach` runs before the harness cleans up, so a worker or
 * tracker a test started is stopped there while its sandbox and prefix still exist.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { test as base } from 'vitest';
import { loadProfile, type BankProfile } from '../../src/input/profile.js';
import { createKeys, type Keys } from '../../src/redis/keys.js';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { ROOT } from './cli.js';
import { openTestDatabase, type TestDatabase, type TestEngine } from './database.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from './redis.js';
import type { UsedDatabase } from './test-db.js';

export interface HarnessOptions {
  /** Once per test (the default) or once per file, shared by its tests. */
  per?: 'test' | 'file';
  /**
   * What a per-file harness still makes for each test (a database of each test's own, as
   * `useTestDatabase()` gave it, beside the file's sandbox). `keys` follows `prefix`; `env` is
   * made for each test when one of `prefix`, `db` or `sandbox` is.
   */
  each?: ReadonlyArray<'prefix' | 'redis' | 'db' | 'dir' | 'sandbox'>;
  /** In the Redis prefix (`test-<label>-…`) and the folder's name (`realty-<label>-…`), to tell a test's leftovers. */
  label?: string;
  /** The sandbox's options; by default one session, `s` (the session `env` gives). */
  sandbox?: SandboxOptions;
  /**
   * The test database's engine; `none`: no database of the test's own, and `env` gives no
   * DATABASE_URL (a command then uses its default place, as the tests that gave none did).
   */
  engine?: TestEngine | 'none';
  /** Options of the `redis` client (BullMQ's workers want `maxRetriesPerRequest: null`). */
  redis?: RedisOptions;
  /** REALTY_SESSION_ID in `env`; the sandbox's first session unless told (`s` when it names none). */
  session?: string;
  /** LOG_LEVEL in `env`; `silent` unless told. */
  logLevel?: string;
}

/** The samples' bank profile, as a command's `--profile` takes it and as the code loads it. */
export interface SampleProfile {
  /** Relative to the project's root, the working folder of a CLI child (test/helpers/cli.ts). */
  readonly arg: string;
  /** Absolute. */
  readonly path: string;
  /** Loaded and checked as a command loads it (src/input/profile.ts). */
  load(): Promise<BankProfile>;
}

export interface Harness {
  prefix: string;
  keys: Keys;
  /** Another prefix (`test-<label>-…`, the harness's label unless told), its keys deleted after the test: always made for each test. */
  openPrefix: (label?: string) => string;
  redis: Redis;
  db: UsedDatabase;
  /**
   * Opens another database (the harness's engine unless told, SQLite when it has none), dropped after the test (or by its `drop`,
   * for a test that loses it part-way): always made for each test.
   */
  openDatabase: (engine?: TestEngine) => Promise<UsedDatabase & { drop(): Promise<void> }>;
  dir: string;
  sandbox: RunningSandbox;
  /** Starts a sandbox (the harness's options unless told), closed after the test: always made for each test. */
  openSandbox: (options?: SandboxOptions) => Promise<RunningSandbox>;
  profile: SampleProfile;
  env: Record<string, string>;
}

export const SAMPLE_PROFILE = 'samples/bank-profile.json';

/** The session of the default sandbox, and of `env`. */
export const SESSION = 's';

/** A database as a test uses it: `url` is DATABASE_URL for a child process. */
function usedOf(made: TestDatabase): UsedDatabase {
  const { target } = made;
  return { db: made.db, target, url: target.engine === 'sqlite' ? `sqlite:${target.path}` : target.url };
}

export function harness(options: HarnessOptions = {}) {
  const per = options.per ?? 'test';
  const each = new Set(options.each ?? []);
  const scopeOf = (name: 'prefix' | 'redis' | 'db' | 'dir' | 'sandbox'): 'test' | 'file' => (each.has(name) ? 'test' : per);
  const envScope = (['prefix', 'db', 'sandbox'] as const).some((name) => scopeOf(name) === 'test') ? 'test' : per;
  const label = options.label ?? 'it';
  const engine = options.engine ?? 'sqlite';
  const sandboxOptions = options.sandbox ?? { sessions: [SESSION] };
  const session = options.session ?? sandboxOptions.sessions?.[0] ?? SESSION;
  return base.extend<Harness>({
    prefix: [
      // eslint-disable-next-line no-empty-pattern -- vitest reads a fixture's dependencies from its first parameter's pattern.
      async ({}, use) => {
        const prefix = uniquePrefix(label);
        try {
          await use(prefix);
        } finally {
          await deletePrefix(prefix);
        }
      },
      { scope: scopeOf('prefix') },
    ],
    keys: [async ({ prefix }, use) => use(createKeys(prefix)), { scope: scopeOf('prefix') }],
    openPrefix: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) => {
        const opened: string[] = [];
        try {
          await use((given = label) => {
            const prefix = uniquePrefix(given);
            opened.push(prefix);
            return prefix;
          });
        } finally {
          for (const prefix of opened) await deletePrefix(prefix);
        }
      },
      { scope: 'test' },
    ],
    redis: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) => {
        const redis = new Redis(REDIS_URL, options.redis ?? {});
        try {
          await use(redis);
        } finally {
          redis.disconnect();
        }
      },
      { scope: scopeOf('redis') },
    ],
    db: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) => {
        if (engine === 'none') {
          const none = (): never => {
            throw new Error("this harness has no database of its own (engine: 'none')");
          };
          return use({
            get db() {
              return none();
            },
            get target() {
              return none();
            },
            get url() {
              return none();
            },
          });
        }
        const made = await openTestDatabase(engine);
        try {
          await use(usedOf(made));
        } finally {
          await made.drop();
        }
      },
      { scope: scopeOf('db') },
    ],
    openDatabase: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) => {
        const opened: TestDatabase[] = [];
        try {
          await use(async (given = engine === 'none' ? 'sqlite' : engine) => {
            const made = await openTestDatabase(given);
            opened.push(made);
            return { ...usedOf(made), drop: () => made.drop() };
          });
        } finally {
          for (const made of opened) await made.drop();
        }
      },
      { scope: 'test' },
    ],
    dir: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) => {
        const dir = await mkdtemp(join(tmpdir(), `realty-${label}-`));
        try {
          await use(dir);
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
      { scope: scopeOf('dir') },
    ],
    sandbox: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) => {
        const sandbox = await startSandbox(sandboxOptions);
        try {
          await use(sandbox);
        } finally {
          await sandbox.close();
        }
      },
      { scope: scopeOf('sandbox') },
    ],
    openSandbox: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) => {
        const opened: RunningSandbox[] = [];
        try {
          await use(async (given = sandboxOptions) => {
            const sandbox = await startSandbox(given);
            opened.push(sandbox);
            return sandbox;
          });
        } finally {
          for (const sandbox of opened) await sandbox.close();
        }
      },
      { scope: 'test' },
    ],
    profile: [
      // eslint-disable-next-line no-empty-pattern
      async ({}, use) =>
        use({ arg: SAMPLE_PROFILE, path: join(ROOT, SAMPLE_PROFILE), load: () => loadProfile(join(ROOT, SAMPLE_PROFILE)) }),
      { scope: per },
    ],
    env: [
      async ({ prefix, db, sandbox }, use) =>
        use({
          REDIS_URL,
          ...(engine === 'none' ? {} : { DATABASE_URL: db.url }),
          REALTY_API_URL: sandbox.url,
          REALTY_SESSION_ID: session,
          REALTY_PREFIX: prefix,
          LOG_LEVEL: options.logLevel ?? 'silent',
        }),
      { scope: envScope },
    ],
  });
}

/** Everything made for each test. */
export const test = harness();
export const it = test;

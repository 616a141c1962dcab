/**
 * Each test gets a database of its own, on either engine, and drops it after. SQLite: a file in
 * a folder of its own, on /dev/shm when there is one (no disk sync to wait for). PostgreSQL: a
 * database copied from the run's template, which test/postgres-template.ts made and migrated once
 * (a copy takes a fraction of a second; migrating each one would take longer). Tests never use
 * the caller's DATABASE_URL: a developer's shell may point it at a real ledger.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/database.js';
import type { DatabaseTarget } from '../../src/db/location.js';
import { migrate } from '../../src/db/migrate.js';

// A test that loads the configuration from process.env (or a child given process.env) finds no
// DATABASE_URL; empty rather than unset, so that a .env in the working folder cannot give one either.
process.env.DATABASE_URL = '';

export const ENGINES = ['sqlite', 'postgres'] as const;
export type TestEngine = (typeof ENGINES)[number];

/** The server's database a test connects to to create and drop its own (its user may create databases). */
export const ADMIN_URL = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
/** Set by test/postgres-template.ts for the test processes: this run's id, its template, or why PostgreSQL cannot be used. */
export const RUN_VARIABLE = 'REALTY_TEST_PG_RUN';
export const TEMPLATE_VARIABLE = 'REALTY_TEST_PG_TEMPLATE';
export const PROBLEM_VARIABLE = 'REALTY_TEST_PG_PROBLEM';
/** Every database the tests make starts with this, then the run's id: what the guard drops after a run. */
export const DATABASE_PREFIX = 'realty_test_';

/** A database of a test's own, not opened: where it is, and how to drop it. */
export interface TestTarget {
  target: DatabaseTarget;
  /** Removes it (the file and its folder, or the PostgreSQL database, whoever is still connected). Safe to call twice. */
  drop(): Promise<void>;
}

/** An open, migrated database of a test's own. `drop` closes it first. */
export interface TestDatabase extends TestTarget {
  db: Database;
}

/** A new database for one test, migrated to the latest schema, open. */
export async function openTestDatabase(engine: TestEngine): Promise<TestDatabase> {
  const made = await createTestTarget(engine);
  const db = openDatabase(made.target);
  try {
    // PostgreSQL's copy is migrated already: this finds nothing to do. SQLite's file is new.
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => undefined);
    await made.drop();
    throw err;
  }
  return {
    db,
    target: made.target,
    async drop() {
      await db.close().catch(() => undefined);
      await made.drop();
    },
  };
}

/**
 * A new database for one test, not opened: migrated already (PostgreSQL's copy of the template)
 * or, with `empty`, with no table at all, as a first start finds it.
 */
export async function createTestTarget(engine: TestEngine, options: { empty?: boolean } = {}): Promise<TestTarget> {
  return engine === 'sqlite' ? createSqliteTarget() : createPostgresTarget(options.empty ?? false);
}

/** Where SQLite test files go: memory when the machine has /dev/shm (nothing to sync to a disk). */
export const SQLITE_FOLDER = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

/** The start of the name of every SQLite folder of this run's (the guard removes those left after it). */
export function sqliteFolderPrefix(run = process.env[RUN_VARIABLE] ?? 'norun'): string {
  return `realty-test-db-${run}-`;
}

async function createSqliteTarget(): Promise<TestTarget> {
  const dir = await mkdtemp(join(SQLITE_FOLDER, sqliteFolderPrefix()));
  return {
    target: { engine: 'sqlite', path: join(dir, 'realty.db') },
    drop: () => rm(dir, { recursive: true, force: true }),
  };
}

async function createPostgresTarget(empty: boolean): Promise<TestTarget> {
  const problem = process.env[PROBLEM_VARIABLE];
  if (problem) throw new Error(problem);
  const run = process.env[RUN_VARIABLE];
  const template = process.env[TEMPLATE_VARIABLE];
  if (!run || !template) {
    throw new Error(
      'No PostgreSQL template for this run: add test/postgres-template.ts to the globalSetup of the vitest config that runs this test.',
    );
  }
  const name = `${DATABASE_PREFIX}${run}_${randomBytes(4).toString('hex')}`;
  // template0 for an empty one: template1 may hold what an administrator put there, or be in use.
  await adminQuery(`create database ${name} template ${empty ? 'template0' : template}`);
  let dropped = false;
  return {
    target: { engine: 'postgres', url: databaseUrl(name) },
    async drop() {
      if (dropped) return;
      dropped = true;
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

/** The admin URL with its database replaced by `name`. */
export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** One statement on the admin database, on a connection of its own (CREATE and DROP DATABASE run outside a transaction). */
export async function adminQuery<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

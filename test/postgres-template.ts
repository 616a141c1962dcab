/**
 * vitest's globalSetup for the databases (test/helpers/database.ts): makes and migrates this
 * run's PostgreSQL template once, which every PostgreSQL test copies; after the run, drops it
 * and fails the run when a test left a database of its own (PostgreSQL's or a SQLite folder),
 * naming them. The names carry the
 * run's id (this process's pid): two runs on one server, or a run beside another engineer's,
 * never touch each other's, and databases of a run whose process is gone are dropped here.
 *
 * Without PostgreSQL the run goes on (the unit tests need none), but every PostgreSQL test
 * fails with the sentence saying what to run: none is skipped in silence.
 *
 * Tests never see the caller's DATABASE_URL, and the default SQLite file of a command a test
 * starts without one lies in this run's own XDG_STATE_HOME, never in the developer's home.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { reasonOf } from '../src/files/atomic-file.js';
import {
  ADMIN_URL,
  adminQuery,
  DATABASE_PREFIX,
  databaseUrl,
  PROBLEM_VARIABLE,
  RUN_VARIABLE,
  SQLITE_FOLDER,
  sqliteFolderPrefix,
  TEMPLATE_VARIABLE,
} from './helpers/database.js';

export default async function setup(): Promise<() => Promise<void>> {
  // Set before the test processes start: they inherit them (empty, so that no .env gives one).
  process.env.DATABASE_URL = '';
  const state = mkdtempSync(join(tmpdir(), 'realty-test-state-'));
  process.env.XDG_STATE_HOME = state;
  const run = `${process.pid}_${randomBytes(2).toString('hex')}`;
  const template = `${DATABASE_PREFIX}${run}_template`;
  process.env[RUN_VARIABLE] = run;
  delete process.env[PROBLEM_VARIABLE];
  removeDeadSqliteFolders();

  let reachable = true;
  try {
    await dropDeadRuns();
  } catch (err) {
    reachable = false;
    process.env[PROBLEM_VARIABLE] =
      `PostgreSQL does not answer at ${new URL(ADMIN_URL).host} (${reasonOf(err)}): run \`node scripts/prepare-tests.mjs\` (it starts or installs it), or set TEST_POSTGRES_URL to a server where this user may create databases.`;
  }
  if (reachable) {
    try {
      await adminQuery(`create database ${template} template template0`);
      const db = openDatabase({ engine: 'postgres', url: databaseUrl(template) }, { poolSize: 1 });
      try {
        await migrate(db);
      } finally {
        await db.close();
      }
      process.env[TEMPLATE_VARIABLE] = template;
    } catch (err) {
      process.env[PROBLEM_VARIABLE] =
        `The PostgreSQL template ${template} could not be made and migrated (${reasonOf(err)}): a migration in src/db/migrations fails, or this user may not create databases.`;
    }
  }

  return async () => {
    rmSync(state, { recursive: true, force: true });
    const files = readdirSync(SQLITE_FOLDER).filter((name) => name.startsWith(sqliteFolderPrefix(run)));
    for (const name of files) rmSync(join(SQLITE_FOLDER, name), { recursive: true, force: true });
    if (files.length > 0) {
      console.error(
        `Tests left ${files.length} SQLite databases in ${SQLITE_FOLDER} (${files.join(', ')}), removed now: call the drop() of openTestDatabase or createTestTarget in the test's afterEach or afterAll.`,
      );
      process.exitCode = 1;
    }
    if (!reachable) return;
    const left = (await ofRun(run)).filter((name) => name !== template);
    for (const name of [...left, template]) await adminQuery(`drop database if exists ${name} with (force)`);
    if (left.length > 0) {
      // vitest reports an error thrown here but still exits 0: the exit code is set instead.
      console.error(
        `Tests left ${left.length} PostgreSQL databases (${left.join(', ')}), dropped now: call the drop() of openTestDatabase or createTestTarget in the test's afterEach or afterAll.`,
      );
      process.exitCode = 1;
    }
  };
}

/** This run's databases. */
async function ofRun(run: string): Promise<string[]> {
  const rows = await adminQuery<{ datname: string }>('select datname from pg_database where starts_with(datname, $1)', [
    `${DATABASE_PREFIX}${run}_`,
  ]);
  return rows.map((r) => r.datname);
}

/**
 * The databases of runs that ended without their teardown (killed, a crash): their process is
 * gone and nobody is connected to them. Only on this host's server, where the pid means something.
 */
async function dropDeadRuns(): Promise<void> {
  const rows = await adminQuery<{ datname: string; connected: number }>(
    `select datname, (select count(*) from pg_stat_activity a where a.datname = d.datname)::int as connected
       from pg_database d where starts_with(datname, $1)`,
    [DATABASE_PREFIX],
  );
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(ADMIN_URL).hostname)) return;
  for (const { datname, connected } of rows) {
    const pid = Number(/^realty_test_(\d+)_/.exec(datname)?.[1]);
    if (connected === 0 && Number.isInteger(pid) && !alive(pid)) await adminQuery(`drop database if exists ${datname} with (force)`);
  }
}

/** The SQLite folders of runs that ended without their teardown, as dropDeadRuns does for PostgreSQL. */
function removeDeadSqliteFolders(): void {
  for (const name of readdirSync(SQLITE_FOLDER)) {
    const pid = Number(/^realty-test-db-(\d+)_/.exec(name)?.[1]);
    if (Number.isInteger(pid) && !alive(pid)) rmSync(join(SQLITE_FOLDER, name), { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists, another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

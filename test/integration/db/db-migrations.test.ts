/**
 * The database's schema across processes, on both engines, with the built code (`npm test`
 * builds first): processes starting at once on a fresh database migrate it exactly once; a
 * database a newer build migrated is refused; `db status` before and after `db migrate`; and a
 * SQLite backup taken while another process writes is whole and has what was committed before it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/db/database.js';
import type { DatabaseTarget } from '../../../src/db/location.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src/db/migrations/index.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { createTestTarget, ENGINES, openTestDatabase, type TestTarget } from '../../helpers/database.js';
import { freePort } from '../../helpers/ports.js';
import { waitFor } from '../../helpers/wait-for.js';

const MIGRATE_CHILD = join(ROOT, 'test/helpers/migrate-child.mjs');
const SQLITE_WRITER = join(ROOT, 'test/helpers/sqlite-writer.mjs');
const TABLES = ['ledger', 'docflows', 'docflow_history', 'feed', 'deployment', 'operator_actions', 'schema_migrations'];
const POLL = { timeoutMs: 20_000, intervalMs: 20 };
/** The tests that start the CLI several times: each start takes a second, several on a busy machine. */
const CLI_TESTS_MS = 90_000;

/** DATABASE_URL for a target: the SQLite file's URL, or the server's. */
function databaseUrl(target: DatabaseTarget): string {
  return target.engine === 'sqlite' ? `sqlite:${target.path}` : target.url;
}

/** What the CLI needs: the database, quiet logs. */
function cliEnv(target: DatabaseTarget): Record<string, string> {
  return { DATABASE_URL: databaseUrl(target), LOG_LEVEL: 'silent' };
}

/**
 * The server's URL with a password in it, to show that no output has it: the test server's own,
 * or one it ignores (trust); none when PGPASSWORD gives it, since a password in the URL wins.
 */
function withPassword(target: DatabaseTarget): { target: DatabaseTarget; password: string | undefined } {
  if (target.engine === 'sqlite') return { target, password: undefined };
  const url = new URL(target.url);
  if (url.password) return { target, password: decodeURIComponent(url.password) };
  if (process.env.PGPASSWORD) return { target, password: undefined };
  url.password = 'never-shown-s3cret';
  return { target: { engine: 'postgres', url: url.toString() }, password: 'never-shown-s3cret' };
}

async function withOpen<T>(target: DatabaseTarget, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = openDatabase(target, { poolSize: 1 });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** A child migrating `target` on the test's go (noted in `children` for the clean-up); resolves once it is connected and waiting. */
async function startMigrating(
  target: DatabaseTarget,
  children: ChildProcess[],
): Promise<{ child: ChildProcess; done: Promise<{ code: number | null; stdout: string; stderr: string }> }> {
  const child = spawn(process.execPath, [MIGRATE_CHILD, JSON.stringify(target)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  // `close`, not `exit`: every line of its output has been read by then.
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  const lines = createInterface({ input: child.stdout! });
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      stdout += `${line}\n`;
      if (line === 'ready') resolve();
    });
    void done.then((r) => reject(new Error(`a migrating process ended before it was ready: ${r.stderr}`)));
  });
  await ready;
  return { child, done };
}

describe.each(ENGINES)('the schema across processes on %s', (engine) => {
  const made: TestTarget[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    for (const m of made.splice(0)) await m.drop();
  });
  const fresh = async () => {
    const t = await createTestTarget(engine, { empty: true });
    made.push(t);
    return t.target;
  };

  it(
    'migrates a fresh database exactly once when several processes start on it at the same moment',
    async () => {
      const target = await fresh();
      const racers = await Promise.all(Array.from({ length: 6 }, () => startMigrating(target, children)));
      // Every one is connected and waiting: the go reaches them all at once.
      for (const r of racers) r.child.stdin!.end('go\n');
      const results = await Promise.all(racers.map((r) => r.done));
      for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
      const applied = results.map((r) => JSON.parse(r.stdout.trim().split('\n').at(-1)!) as number[]);
      const all = MIGRATIONS.map((m) => m.version);
      // One applied them all; the others waited for its lock and found nothing to do.
      expect(applied.filter((a) => a.length > 0)).toEqual([all]);
      expect(applied.filter((a) => a.length === 0)).toHaveLength(racers.length - 1);
      await withOpen(target, async (db) => {
        const { rows } = await sql<{ version: number; name: string }>`select version, name from schema_migrations order by version`.execute(
          db.kysely,
        );
        expect(rows.map((r) => ({ version: Number(r.version), name: r.name }))).toEqual(
          MIGRATIONS.map(({ version, name }) => ({ version, name })),
        );
        const tables = (await db.kysely.introspection.getTables()).map((t) => t.name);
        expect(tables).toEqual(expect.arrayContaining(TABLES));
      });
    },
    CLI_TESTS_MS,
  );

  it(
    'says with db status what is pending, applies it with db migrate, and shows it applied after, never with a password',
    async () => {
      const { target, password } = withPassword(await fresh());
      const outputs: string[] = [];
      const before = await runCli(['db', 'status', '--json'], cliEnv(target));
      expect(before, before.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(before.stdout)).toMatchObject({
        engine,
        current: 0,
        latest: SCHEMA_VERSION,
        applied: [],
        pending: MIGRATIONS.map(({ version, name }) => ({ version, name })),
      });

      const migrated = await runCli(['db', 'migrate'], cliEnv(target));
      expect(migrated, migrated.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(migrated.stdout).toMatch(
        new RegExp(`: applied ${MIGRATIONS.length} migrations? \\(1 system-of-record.*\\); the schema is at version ${SCHEMA_VERSION}\\n$`),
      );

      const after = await runCli(['db', 'status', '--json'], cliEnv(target));
      expect(after.code).toBe(0);
      const status = JSON.parse(after.stdout);
      expect(status).toMatchObject({ engine, exists: true, current: SCHEMA_VERSION, latest: SCHEMA_VERSION, pending: [] });
      expect(status.applied.map((m: { version: number; name: string }) => [m.version, m.name])).toEqual(
        MIGRATIONS.map((m) => [m.version, m.name]),
      );
      expect(Date.parse(status.applied[0].appliedAt)).toBeGreaterThan(Date.now() - 60_000);
      const text = await runCli(['db', 'status'], cliEnv(target));
      expect(text.stdout.split('\n').slice(0, 2)).toEqual([
        `database: ${engine}, ${status.where}`,
        `schema: version ${SCHEMA_VERSION} of ${SCHEMA_VERSION} (up to date)`,
      ]);
      outputs.push(...[before, migrated, after, text].flatMap((r) => [r.stdout, r.stderr]));
      if (password) for (const output of outputs) expect(output).not.toContain(password);
    },
    CLI_TESTS_MS,
  );

  it(
    'refuses a database whose schema is newer than this build, with its sentence, and changes nothing',
    async () => {
      const { db, target, drop } = await openTestDatabase(engine);
      made.push({ target, drop });
      await sql`insert into schema_migrations (version, name, applied_at) values (${SCHEMA_VERSION + 1}, 'from-a-newer-build', '2030-01-01T00:00:00.000Z')`.execute(
        db.kysely,
      );
      await db.close();
      const sentence = new RegExp(
        `^realty-batch: The database \\S+ has schema version ${SCHEMA_VERSION + 1}, newer than this realty-batch knows \\(${SCHEMA_VERSION}\\): upgrade realty-batch on this host before it uses that database\\.\\n$`,
      );
      const migrate = await runCli(['db', 'migrate'], cliEnv(target));
      expect(migrate.code).toBe(1);
      expect(migrate.stderr).toMatch(sentence);
      // db status prints what it found, then refuses in the same sentence.
      const status = await runCli(['db', 'status'], cliEnv(target));
      expect(status.code).toBe(1);
      expect(status.stdout).toContain(`schema: version ${SCHEMA_VERSION + 1} of ${SCHEMA_VERSION} (newer than this realty-batch)`);
      expect(status.stderr).toMatch(sentence);
      await withOpen(target, async (again) => {
        const { rows } = await sql<{ n: number }>`select count(*) as n from schema_migrations`.execute(again.kysely);
        expect(Number(rows[0]!.n)).toBe(MIGRATIONS.length + 1);
      });
    },
    CLI_TESTS_MS,
  );
});

describe('the database from the command line', () => {
  const made: TestTarget[] = [];
  const children: ChildProcess[] = [];
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
    for (const m of made.splice(0)) await m.drop();
  });

  it(
    'backs up a SQLite database while another process writes: the copy is whole and has every row committed before',
    async () => {
      const { db, target, drop } = await openTestDatabase('sqlite');
      made.push({ target, drop });
      await db.close();
      const path = (target as { path: string }).path;
      // A few megabytes: a copy made in steps of 100 pages would be started again by every write.
      const live = new BetterSqlite3(path, { timeout: 15_000 });
      const fill = live.prepare(
        `insert into operator_actions (at, who, action, detail) values ('2026-01-01T00:00:00Z', 'fill', 'fill', ?)`,
      );
      live.transaction(() => {
        for (let i = 0; i < 20_000; i++) fill.run('y'.repeat(200));
      })();
      const writer = spawn(process.execPath, [SQLITE_WRITER, path], { cwd: ROOT, stdio: 'ignore' });
      children.push(writer);
      const written = () => (live.prepare(`select count(*) as n from operator_actions where who = 'writer'`).get() as { n: number }).n;
      await waitFor(() => written() >= 200, { ...POLL, what: 'the writer to commit rows' });

      const last = live.prepare('select max(id) as id, count(*) as n from operator_actions').get() as { id: number; n: number };
      const backup = join(path, '..', 'backup.db');
      const result = await runCli(['db', 'backup', backup], cliEnv(target));
      expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toBe(`backed up sqlite:${path} to ${backup}\n`);
      // The writer was not held up by the backup: it goes on writing after it.
      const end = written();
      await waitFor(() => written() > end, { ...POLL, what: 'the writer to go on writing' });
      expect(writer.exitCode).toBeNull();
      live.close();

      const copy = new BetterSqlite3(backup, { readonly: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
        const had = copy.prepare('select count(*) as n from operator_actions where id <= ?').get(last.id) as { n: number };
        expect(had.n).toBe(last.n);
        const versions = copy.prepare('select version from schema_migrations').all();
        expect(versions).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
      } finally {
        copy.close();
      }
    },
    CLI_TESTS_MS,
  );

  it(
    'ends with one sentence naming the PostgreSQL server without its password when it does not answer',
    async () => {
      const port = await freePort();
      const url = `postgres://realty:s3cret@127.0.0.1:${port}/realty`;
      for (const args of [
        ['db', 'status'],
        ['db', 'migrate'],
      ]) {
        const result = await runCli(args, { DATABASE_URL: url, LOG_LEVEL: 'silent' });
        expect(result.code, args.join(' ')).toBe(1);
        expect(result.stderr).toMatch(
          new RegExp(
            `^realty-batch: The database postgres://realty:\\*\\*\\*@127\\.0\\.0\\.1:${port}/realty cannot be used \\(.*ECONNREFUSED.*\\): check DATABASE_URL and that the database answers, then run the command again\\.\\n$`,
          ),
        );
        expect(result.stdout + result.stderr).not.toContain('s3cret');
      }
    },
    CLI_TESTS_MS,
  );
});

/**
 * withDatabase and `realty-batch db`, in this process on SQLite files of the test's own (no
 * server, no child): migrated at start, always closed, the target a test injects, and what
 * `db status|migrate|backup` print and exit with. Both engines, in child processes:
 * test/integration/db/db-migrations.test.ts.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Env } from '../../src/cli/environment.js';
import { runProgram } from '../../src/cli/program.js';
import { withDatabase } from '../../src/cli/with-database.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { DatabaseTarget } from '../../src/db/location.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/db/migrations/index.js';
import { DatabaseError } from '../../src/errors.js';
import { createLogger } from '../../src/logger.js';
import { createKeys } from '../../src/redis/keys.js';

/** An environment from these variables alone (never process.env), with the database a test gives. */
function envOf(vars: Record<string, string>, database?: DatabaseTarget): Env {
  const config = loadConfig({ REALTY_PREFIX: 'cli-with-database-test', ...vars });
  return {
    config,
    logger: createLogger({ level: 'silent' }),
    keys: createKeys(config.prefix),
    connect: async () => {
      throw new Error('this test has no Redis');
    },
    ...(database && { database }),
  };
}

/** `realty-batch ...args` in this process: its exit code and what it printed. */
async function cli(args: string[], env: Env | (() => Env)): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void (stdout += `${parts.join(' ')}\n`));
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void (stderr += `${parts.join(' ')}\n`));
  try {
    const code = await runProgram(['node', 'realty-batch', ...args], {
      environment: typeof env === 'function' ? env : () => env,
      output: { writeOut: (s) => (stdout += s), writeErr: (s) => (stderr += s) },
    });
    return { code, stdout, stderr };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

function versionsIn(path: string): number[] {
  const raw = new BetterSqlite3(path, { readonly: true });
  try {
    return raw
      .prepare('select version from schema_migrations order by version')
      .all()
      .map((r) => (r as { version: number }).version);
  } finally {
    raw.close();
  }
}

describe('withDatabase and the db command on SQLite', () => {
  let dir: string;
  let path: string;
  let target: DatabaseTarget;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-cli-db-'));
    path = join(dir, 'state', 'realty.db');
    target = { engine: 'sqlite', path };
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('migrates the database at start, gives the command the versions it applied, and closes it after', async () => {
    let seen: Database | undefined;
    const first = await withDatabase(envOf({ DATABASE_URL: `sqlite:${path}` }), async (db, migrated) => {
      seen = db;
      const tables = (await db.kysely.introspection.getTables()).map((t) => t.name);
      return { migrated, tables };
    });
    expect(first.migrated).toEqual(MIGRATIONS.map((m) => m.version));
    expect(first.tables).toEqual(expect.arrayContaining(['ledger', 'docflows', 'feed', 'deployment', 'schema_migrations']));
    await expect(seen!.kysely.selectFrom('feed').selectAll().execute()).rejects.toThrow();
    // The next start finds nothing to apply.
    await expect(withDatabase(envOf({ DATABASE_URL: `sqlite:${path}` }), async (_db, migrated) => migrated)).resolves.toEqual([]);
    expect(versionsIn(path)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it("closes the database when the command throws, and the command's error is what the caller sees", async () => {
    let seen: Database | undefined;
    await expect(
      withDatabase(envOf({}, target), async (db) => {
        seen = db;
        throw new Error('the command failed');
      }),
    ).rejects.toThrow('the command failed');
    await expect(seen!.kysely.selectFrom('feed').selectAll().execute()).rejects.toThrow();
  });

  it("uses the database a test injects over the configuration's, and leaves it unmigrated when told", async () => {
    const configured = join(dir, 'configured.db');
    const where = await withDatabase(
      envOf({ DATABASE_URL: `sqlite:${configured}` }, target),
      async (db, migrated) => ({ where: db.where, migrated }),
      {
        migrate: false,
      },
    );
    expect(where).toEqual({ where: `sqlite:${path}`, migrated: [] });
    const raw = new BetterSqlite3(path, { readonly: true });
    expect(raw.prepare("select count(*) as n from sqlite_master where type = 'table'").get()).toEqual({ n: 0 });
    raw.close();
    await expect(readFile(configured)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses a database whose schema is newer than this build, before the command runs', async () => {
    await withDatabase(envOf({}, target), async () => undefined);
    const raw = new BetterSqlite3(path);
    raw
      .prepare("insert into schema_migrations (version, name, applied_at) values (?, 'from-the-future', '2030-01-01T00:00:00.000Z')")
      .run(SCHEMA_VERSION + 1);
    raw.close();
    const fn = vi.fn(async () => undefined);
    const refused = withDatabase(envOf({}, target), fn);
    await expect(refused).rejects.toBeInstanceOf(DatabaseError);
    await expect(refused).rejects.toThrow(
      `The database sqlite:${path} has schema version ${SCHEMA_VERSION + 1}, newer than this realty-batch knows (${SCHEMA_VERSION}): upgrade realty-batch on this host before it uses that database.`,
    );
    expect(fn).not.toHaveBeenCalled();
  });

  it('says what db status finds before the file exists, after db migrate, and as JSON, without making the file to look', async () => {
    const env = envOf({}, target);
    const before = await cli(['db', 'status', '--json'], env);
    expect(before).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(before.stdout)).toEqual({
      engine: 'sqlite',
      where: `sqlite:${path}`,
      exists: false,
      current: 0,
      latest: SCHEMA_VERSION,
      applied: [],
      pending: MIGRATIONS.map(({ version, name }) => ({ version, name })),
    });
    await expect(readFile(path)).rejects.toMatchObject({ code: 'ENOENT' });

    const migrated = await cli(['db', 'migrate'], env);
    expect(migrated).toMatchObject({ code: 0, stderr: '' });
    const applied = MIGRATIONS.map(({ version, name }) => `${version} ${name}`).join(', ');
    const count = `${MIGRATIONS.length} migration${MIGRATIONS.length === 1 ? '' : 's'}`;
    expect(migrated.stdout).toBe(`sqlite:${path}: applied ${count} (${applied}); the schema is at version ${SCHEMA_VERSION}\n`);
    const again = await cli(['db', 'migrate'], env);
    expect(again.stdout).toBe(`sqlite:${path}: nothing to apply, the schema is at version ${SCHEMA_VERSION}, the latest\n`);

    const after = await cli(['db', 'status'], env);
    expect(after).toMatchObject({ code: 0, stderr: '' });
    const lines = after.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`database: sqlite, sqlite:${path}`);
    expect(lines[1]).toBe(`schema: version ${SCHEMA_VERSION} of ${SCHEMA_VERSION} (up to date)`);
    expect(lines[2]).toMatch(/^ {2}applied {2}1 system-of-record {2}\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    expect(lines).toHaveLength(2 + MIGRATIONS.length);
  });

  it('backs up a SQLite database whole over an older backup, and refuses the live file itself with exit 2', async () => {
    const env = envOf({}, target);
    expect((await cli(['db', 'backup', join(dir, 'b.db')], env)).stderr).toBe(
      `realty-batch: The database sqlite:${path} does not exist yet: there is nothing to back up.\n`,
    );
    await withDatabase(env, async (db) => {
      await db.kysely
        .insertInto('operator_actions')
        .values({ at: 'now', who: 'ops', action: 'test', batch: null, deal_id: 'D-1', detail: '{}' })
        .execute();
    });
    const backup = join(dir, 'backups', 'realty.db');
    await mkdir(join(dir, 'backups'));
    await writeFile(backup, 'an older backup');
    const done = await cli(['db', 'backup', backup], env);
    expect(done).toEqual({ code: 0, stdout: `backed up sqlite:${path} to ${backup}\n`, stderr: '' });
    expect((await stat(backup)).mode & 0o777).toBe(0o600);
    const copy = new BetterSqlite3(backup, { readonly: true });
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.prepare('select deal_id from operator_actions').all()).toEqual([{ deal_id: 'D-1' }]);
    copy.close();

    const live = await readFile(path);
    for (const file of [path, `${path}-wal`]) {
      const refused = await cli(['db', 'backup', file], env);
      expect(refused.code, file).toBe(2);
      expect(refused.stderr).toBe(
        `realty-batch: ${file} is the live database ${path} (or one of its files): give the backup another file.\n`,
      );
    }
    expect(await readFile(path)).toEqual(live);
  });

  it('leaves the previous backup and no temporary file when the copy cannot be put in place', async () => {
    const env = envOf({}, target);
    await withDatabase(env, async () => undefined);
    // A folder where the backup should go: the rename over it fails.
    const taken = join(dir, 'taken');
    await mkdir(join(taken, 'inside'), { recursive: true });
    const failed = await cli(['db', 'backup', taken], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      new RegExp(`^realty-batch: The backup to ${taken} failed \\(.+\\); the previous file there, if any, is unchanged\\.\\n$`),
    );
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp') || name.endsWith('-journal'))).toEqual([]);
    expect(await readdir(taken)).toEqual(['inside']);
  });

  it('names pg_dump and the URL without its password for a PostgreSQL backup, exit 2, without connecting', async () => {
    // Nothing listens on port 1: a connection would fail with another sentence.
    const env = envOf({ DATABASE_URL: 'postgres://realty:s3cret@127.0.0.1:1/realty?sslmode=disable' });
    const result = await cli(['db', 'backup', 'realty.dump'], env);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "realty-batch: The database is PostgreSQL: back it up with pg_dump, e.g. pg_dump --format=custom --file=realty.dump 'postgres://realty@127.0.0.1:1/realty' (its password from PGPASSWORD or ~/.pgpass).\n",
    });
  });

  it('ends a db command with exit 1 and the sentence when DATABASE_URL is not valid', async () => {
    const result = await cli(['db', 'status'], () => envOf({ DATABASE_URL: 'sqlite:realty.db' }));
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'realty-batch: DATABASE_URL sqlite:realty.db does not name an absolute path (sqlite:/var/lib/realty-batch/realty.db): a relative one would give every working folder a ledger of its own.\n',
    });
  });
});

/**
 * Migrations applied at start, under a lock that holds across processes: PostgreSQL's
 * advisory lock taken in the migration's transaction (DDL is transactional there), SQLite's
 * `BEGIN EXCLUSIVE`. Two processes starting at once: one applies, the other waits and then
 * finds nothing to do. A database whose schema is newer than this build is refused whole.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { DatabaseError } from '../errors.js';
import type { Database } from './database.js';
import { MIGRATIONS, SCHEMA_VERSION, type Migration } from './migrations/index.js';

/** The advisory lock's key: any constant this project alone uses. */
const PG_MIGRATION_LOCK = 7_246_115_309;

export interface SchemaStatus {
  /** The newest migration applied (0: none). */
  current: number;
  /** The newest this build knows. */
  latest: number;
  applied: Array<{ version: number; name: string; appliedAt: string }>;
  pending: Array<{ version: number; name: string }>;
}

/** Applies what is pending; returns the versions it applied (none when another process did). */
export async function migrate(db: Database): Promise<number[]> {
  return underLock(db, async (conn) => {
    await ensureHistory(conn);
    const current = await currentVersion(conn);
    refuseNewer(db, current);
    const applied: number[] = [];
    for (const m of MIGRATIONS.filter((m) => m.version > current)) {
      await m.up(conn, db.engine);
      await sql`insert into schema_migrations (version, name, applied_at) values (${m.version}, ${m.name}, ${new Date().toISOString()})`.execute(
        conn,
      );
      applied.push(m.version);
    }
    return applied;
  });
}

/** What is applied and what is pending, without changing anything. */
export async function schemaStatus(db: Database): Promise<SchemaStatus> {
  const conn = db.kysely as unknown as Kysely<unknown>;
  const exists = await historyExists(db);
  const rows = exists
    ? (
        await sql<{
          version: number;
          name: string;
          applied_at: string;
        }>`select version, name, applied_at from schema_migrations order by version`.execute(conn)
      ).rows
    : [];
  const current = rows.reduce((max, r) => Math.max(max, Number(r.version)), 0);
  return {
    current,
    latest: SCHEMA_VERSION,
    applied: rows.map((r) => ({ version: Number(r.version), name: r.name, appliedAt: r.applied_at })),
    pending: MIGRATIONS.filter((m: Migration) => m.version > current).map(({ version, name }) => ({ version, name })),
  };
}

/** Refuses a database a newer build migrated: this one would misread its tables. */
export function refuseNewer(db: Database, current: number): void {
  if (current > SCHEMA_VERSION) throw newerSchemaError(db.where, current);
}

/** The sentence of a database at schema version `current`, newer than this build's. */
export function newerSchemaError(where: string, current: number): DatabaseError {
  return new DatabaseError(
    `The database ${where} has schema version ${current}, newer than this realty-batch knows (${SCHEMA_VERSION}): upgrade realty-batch on this host before it uses that database.`,
  );
}

async function underLock<T>(db: Database, fn: (conn: Kysely<unknown>) => Promise<T>): Promise<T> {
  if (db.engine === 'postgres') {
    return db.kysely.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${PG_MIGRATION_LOCK})`.execute(trx);
      return fn(trx as unknown as Kysely<unknown>);
    });
  }
  return db.kysely.connection().execute(async (conn) => {
    await sql`begin exclusive`.execute(conn);
    try {
      const result = await fn(conn as unknown as Kysely<unknown>);
      await sql`commit`.execute(conn);
      return result;
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw err;
    }
  });
}

async function ensureHistory(conn: Kysely<unknown>): Promise<void> {
  await conn.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
}

async function currentVersion(conn: Kysely<unknown>): Promise<number> {
  const { rows } = await sql<{ v: number | null }>`select max(version) as v from schema_migrations`.execute(conn);
  return Number(rows[0]?.v ?? 0);
}

async function historyExists(db: Database): Promise<boolean> {
  const tables = await db.kysely.introspection.getTables();
  return tables.some((t) => t.name === 'schema_migrations');
}

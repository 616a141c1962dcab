/**
 * One open database: the query layer (Kysely) over SQLite (better-sqlite3) or PostgreSQL (pg),
 * with the one way this project runs a transaction on each. Every decision that must be atomic
 * (a claim, an outcome, a feed page) is a function run inside `transaction`.
 *
 * SQLite: WAL, `synchronous=FULL` (a commit is on disk before the creation call goes out), a
 * busy timeout, one connection per process, and `BEGIN IMMEDIATE` (a deferred BEGIN takes its
 * write lock only at the first write, and that upgrade fails at once when another process
 * writes: SQLITE_BUSY without waiting). PostgreSQL: READ COMMITTED, rows locked with
 * `SELECT … FOR UPDATE` in key order by the callers, retried on a serialization failure or a
 * deadlock.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, type Transaction } from 'kysely';
import type PgModule from 'pg';
import { DatabaseError } from '../errors.js';
import { backupSqlite } from './backup.js';
import { describeTarget, type DatabaseTarget } from './location.js';
import type { Schema } from './schema.js';

export type Engine = DatabaseTarget['engine'];
export type Db = Kysely<Schema>;
export type Trx = Transaction<Schema> | Kysely<Schema>;

export interface Database {
  readonly engine: Engine;
  readonly kysely: Db;
  /** Where it is, for people: the file, or the server's URL without its password. */
  readonly where: string;
  /** Runs `fn` in one transaction (see the file's comment); retried whole on a transient conflict. */
  transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T>;
  /** Milliseconds of the database's clock (SQLite's is this host's: the file is here). */
  now(trx?: Trx): Promise<number>;
  /**
   * SQLite only: a consistent copy of the live database written whole to `file` (src/db/backup.ts).
   * PostgreSQL has none: pg_dump is the tool there.
   */
  backup?(file: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a SQLite writer waits for another process's write lock before it fails (ms). */
export const SQLITE_BUSY_MS = 15_000;
/** How many times a PostgreSQL transaction is tried on serialization failures and deadlocks. */
const PG_TRIES = 8;
/** PostgreSQL's int8 (OID 20) as a number: every bigint here is milliseconds or a count. */
const INT8 = 20;

export function openDatabase(target: DatabaseTarget, options: { poolSize?: number } = {}): Database {
  return target.engine === 'sqlite' ? openSqlite(target.path) : openPostgres(target.url, options.poolSize ?? 4);
}

function openSqlite(path: string): Database {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let raw: BetterSqlite3.Database;
  try {
    raw = new BetterSqlite3(path, { timeout: SQLITE_BUSY_MS });
    raw.pragma('journal_mode = WAL');
    raw.pragma('synchronous = FULL');
    raw.pragma('foreign_keys = ON');
  } catch (err) {
    throw new DatabaseError(`The database ${path} cannot be opened: ${(err as Error).message}.`, { cause: err });
  }
  const kysely = new Kysely<Schema>({ dialect: new SqliteDialect({ database: cachingStatements(raw) }) });
  return {
    engine: 'sqlite',
    kysely,
    where: `sqlite:${path}`,
    async transaction(fn) {
      // One connection: Kysely's SQLite driver hands it to one caller at a time.
      return kysely.connection().execute(async (conn) => {
        await conn.executeQuery(BEGIN_IMMEDIATE);
        try {
          const result = await fn(conn);
          await conn.executeQuery(COMMIT);
          return result;
        } catch (err) {
          if (raw.inTransaction) await conn.executeQuery(ROLLBACK);
          throw err;
        }
      });
    },
    now: () => Promise.resolve(Date.now()),
    backup: (file) => backupSqlite(raw, path, file),
    async close() {
      await kysely.destroy();
    },
  };
}

/** A transaction's own statements, compiled once: each group of decisions runs them (src/db/group-commit.ts). */
const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');
/** PostgreSQL's clock, ms: what the ledger compares its times with. */
const NOW = CompiledQuery.raw('select (extract(epoch from clock_timestamp()) * 1000)::int8 as now');

/** How many prepared statements a SQLite connection keeps: the project runs fewer than 200 distinct ones. */
export const STATEMENT_CACHE_SIZE = 500;

/**
 * The most values a statement is given as separate arguments (below); a longer list, which no
 * statement of the project's has (SQLite allows 32,766), goes as one array.
 */
const SPREAD_MAX = 4096;

/** A prepared statement as Kysely's SQLite driver uses it, with the driver's list of values bound one argument each. */
export interface KeptStatement {
  readonly reader: boolean;
  /** Whether the statement is still iterating a streamed select. */
  readonly busy: boolean;
  all(values?: readonly unknown[]): unknown[];
  run(values?: readonly unknown[]): BetterSqlite3.RunResult;
  iterate(values?: readonly unknown[]): IterableIterator<unknown>;
}

/**
 * The driver passes a query's values as one array, which better-sqlite3 reads element by
 * element through V8's API; given as separate arguments, it reads them directly. A feed page's
 * docflows (1,600 values) were written in 274 µs a statement with the array, 218 with the
 * values spread (docs/performance.md).
 */
function keptStatement(statement: BetterSqlite3.Statement): KeptStatement {
  const spread = (values: readonly unknown[] = []) => (values.length <= SPREAD_MAX ? values : [values]);
  return {
    reader: statement.reader,
    get busy() {
      return statement.busy;
    },
    all: (values) => statement.all(...spread(values)),
    run: (values) => statement.run(...spread(values)),
    iterate: (values) => statement.iterate(...spread(values)),
  };
}

/**
 * The connection Kysely's SQLite driver sees, keeping each query's prepared statement:
 * the driver prepares every query it runs, and preparing the same text again at every claim
 * is work thrown away. A query's text names its statement (values are bound parameters), so
 * the cache holds the project's few hundred queries, least recently used dropped first. A statement still iterating (a streamed select) is not reused: a
 * fresh one is prepared for the second caller.
 */
export function cachingStatements(raw: BetterSqlite3.Database, size = STATEMENT_CACHE_SIZE) {
  const statements = new Map<string, KeptStatement>();
  return {
    close: () => raw.close(),
    prepare(text: string): KeptStatement {
      const kept = statements.get(text);
      if (kept !== undefined) {
        if (kept.busy) return keptStatement(raw.prepare(text));
        statements.delete(text);
        statements.set(text, kept);
        return kept;
      }
      const statement = keptStatement(raw.prepare(text));
      statements.set(text, statement);
      if (statements.size > size) statements.delete(statements.keys().next().value!);
      return statement;
    },
  };
}

function openPostgres(url: string, poolSize: number): Database {
  // Loaded only for PostgreSQL: loading pg would slow every command's start on SQLite, the default.
  const pg = createRequire(import.meta.url)('pg') as typeof PgModule;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // A server that does not answer: the query fails (an outage, src/worker/deal/failure.ts) instead of waiting for ever.
    connectionTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? Number : (pg.types.getTypeParser(oid, format ?? 'text') as unknown)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client whose server went away: the pool drops it; the next query reconnects.
  pool.on('error', () => {});
  const kysely = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  const where = describeTarget({ engine: 'postgres', url });
  return {
    engine: 'postgres',
    kysely,
    where,
    async transaction(fn) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await kysely.transaction().execute(fn);
        } catch (err) {
          if (attempt >= PG_TRIES || !isTransientConflict(err)) throw err;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
        }
      }
    },
    async now(trx) {
      const { rows } = await (trx ?? kysely).executeQuery<{ now: number }>(NOW);
      return rows[0]!.now;
    },
    async close() {
      await kysely.destroy();
    },
  };
}

/** PostgreSQL's serialization failure and deadlock: the transaction may simply be run again. */
export function isTransientConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === '40001' || code === '40P01';
}

/** An error of the database's connection rather than of a query: the database is away, not wrong. */
export function isDatabaseOutage(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  // pg's own: the pool's connection timeout, and a connection the server closed.
  if (err instanceof Error && /timeout exceeded when trying to connect|Connection terminated/.test(err.message)) return true;
  if (typeof code !== 'string') return false;
  return (
    [
      'ECONNREFUSED',
      'ECONNRESET',
      'ETIMEDOUT',
      'EPIPE',
      'ENOTFOUND',
      'EHOSTUNREACH',
      'SQLITE_BUSY',
      'SQLITE_IOERR',
      'SQLITE_FULL',
    ].includes(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P03'
  );
}

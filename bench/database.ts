/**
 * The bench's systems of record, opened and migrated as a command opens them (openDatabase +
 * migrate), emptied after each figure's run as Redis is, closed and removed at the end:
 * - SQLite: a file in a folder under /dev/shm (memory, as the bench's Redis keeps no disk
 *   either: the figures measure the project, not this host's disk);
 * - PostgreSQL: a database the bench creates on the server of BENCH_POSTGRES_URL (default
 *   postgres://postgres@127.0.0.1:5432/postgres, the one every developer and CI machine runs)
 *   and drops at the end, with the `work` command's pool (4 connections; BENCH_POSTGRES_POOL
 *   for another). Its commits go to that server's data directory, on this host's disk.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type PgModule from 'pg';
import { openDatabase, type Database, type Engine } from '../src/db/database.js';
import { describeUrl } from '../src/db/location.js';
import { migrate } from '../src/db/migrate.js';
import { sql } from 'kysely';
import { processCpuNs } from './server-cpu.js';

export interface BenchDatabase {
  db: Database;
  engine: Engine;
  /** Its DATABASE_URL, for a command run in a child process (load-1m). */
  url: string;
  /** Deletes every row the project wrote: the next run starts as on a new deployment (a new feed cursor). */
  clear(): Promise<void>;
  /**
   * CPU (ns) of the server processes serving this database, by process id: none for SQLite (it
   * runs in the bench's own process), PostgreSQL's backends of this database.
   */
  serverCpu(): Promise<Map<number, number>>;
  /** Closes it and removes its folder (SQLite) or drops it (PostgreSQL). */
  close(): Promise<void>;
}

/** The server the PostgreSQL figures use: a user that may create databases. */
export const BENCH_POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** The pool of the bench's PostgreSQL database: the `work` command's (src/db/database.ts's default). */
export const BENCH_POSTGRES_POOL = Number(process.env.BENCH_POSTGRES_POOL ?? 4);

/** Tables the project writes, children first; those a build does not have yet are skipped. */
const TABLES = ['docflow_history', 'docflows', 'ledger', 'outcomes', 'batches', 'feed', 'operator_actions', 'deployment'];

export async function openBenchDatabase(engine: Engine = 'sqlite'): Promise<BenchDatabase> {
  return engine === 'sqlite' ? openSqliteDatabase() : openPostgresDatabase();
}

async function openSqliteDatabase(): Promise<BenchDatabase> {
  // /dev/shm where there is one (Linux); the temp folder elsewhere.
  const dir = await mkdtemp(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'realty-bench-db-'));
  const path = join(dir, 'bench.db');
  let db: Database | undefined;
  try {
    db = openDatabase({ engine: 'sqlite', path });
    await migrate(db);
  } catch (err) {
    await db?.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const opened = db;
  const tables = await presentTables(opened);
  return {
    db: opened,
    engine: 'sqlite',
    url: `sqlite:${path}`,
    async clear() {
      await opened.transaction(async (trx) => {
        for (const table of tables) await sql`delete from ${sql.table(table)}`.execute(trx);
      });
    },
    serverCpu: () => Promise.resolve(new Map()),
    async close() {
      try {
        await opened.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

/** `realty_bench_<pid>_<random>`: a run's own; a crashed run's is dropped by the next one (its pid is gone). */
const PG_NAME = /^realty_bench_(\d+)_[0-9a-f]+$/;

async function openPostgresDatabase(): Promise<BenchDatabase> {
  const pg = createRequire(import.meta.url)('pg') as typeof PgModule;
  const admin = new pg.Client({ connectionString: BENCH_POSTGRES_URL, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(
      `The bench's PostgreSQL figures need a server at ${describeUrl(BENCH_POSTGRES_URL)} (${(err as Error).message}): start it (pg_ctlcluster --skip-systemctl-redirect 15 main start) or name one in BENCH_POSTGRES_URL.`,
      { cause: err },
    );
  }
  const name = `realty_bench_${process.pid}_${Math.floor(Math.random() * 0xffffff).toString(16)}`;
  let db: Database | undefined;
  try {
    const { rows } = await admin.query<{ datname: string }>(`select datname from pg_database where datname like 'realty\\_bench\\_%'`);
    for (const { datname } of rows) {
      const pid = PG_NAME.exec(datname)?.[1];
      if (pid && !alive(Number(pid))) await admin.query(`drop database if exists "${datname}" with (force)`);
    }
    await admin.query(`create database "${name}"`);
    const url = new URL(BENCH_POSTGRES_URL);
    url.pathname = `/${name}`;
    db = openDatabase({ engine: 'postgres', url: url.toString() }, { poolSize: BENCH_POSTGRES_POOL });
    await migrate(db);
    const opened = db;
    const tables = await presentTables(opened);
    return {
      db: opened,
      engine: 'postgres',
      url: url.toString(),
      async clear() {
        // A run's last commits (its follower's page, a pruning pass) may still hold a table the
        // truncate waits for while they wait for one it took: PostgreSQL ends one of the two.
        await opened.transaction(async (trx) => {
          await sql`truncate table ${sql.join(tables.map((t) => sql.table(t)))}`.execute(trx);
        });
      },
      async serverCpu() {
        const { rows: backends } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [name]);
        const cpu = new Map<number, number>();
        for (const { pid } of backends) {
          const ns = processCpuNs(pid);
          if (ns !== undefined) cpu.set(pid, ns);
        }
        return cpu;
      },
      async close() {
        try {
          await opened.close();
        } finally {
          await admin.query(`drop database if exists "${name}" with (force)`);
          await admin.end();
        }
      },
    };
  } catch (err) {
    await db?.close().catch(() => undefined);
    await admin.query(`drop database if exists "${name}" with (force)`).catch(() => undefined);
    await admin.end();
    throw err;
  }
}

/**
 * Marks the feed read complete every `everyMs` until the returned stop is called: what a
 * follower's empty reads would write, for a bench run without one (a claim needs the feed read
 * complete within two poll intervals, src/ledger/claim.ts).
 */
export function keepFeedComplete(db: Database, everyMs = 250): () => void {
  const timer = setInterval(() => {
    void db
      .now()
      .then((now) => db.kysely.updateTable('feed').set({ covered_at: now }).where('id', '=', 1).execute())
      .catch(() => undefined);
  }, everyMs).unref();
  return () => clearInterval(timer);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The project's tables this build's migrations made (a table a later migration adds is cleared once it exists). */
async function presentTables(db: Database): Promise<string[]> {
  const tables = await db.kysely.introspection.getTables();
  const names = new Set(tables.map((t) => t.name));
  return TABLES.filter((t) => names.has(t));
}

/**
 * The bench's system of record: a SQLite database of its own (the ledger, the news feed's row,
 * the docflows' states), in a folder under /dev/shm (memory, as the bench's Redis keeps no
 * disk either: the figures measure the project, not this host's disk), opened and migrated
 * as a command opens it (openDatabase + migrate), emptied after each figure's run as Redis is,
 * closed and removed at the end.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';

export interface BenchDatabase {
  db: Database;
  /** Its DATABASE_URL, for a command run in a child process (load-1m). */
  url: string;
  /** Deletes every row the project wrote: the next run starts as on a new deployment (a new feed cursor). */
  clear(): Promise<void>;
  /** Closes it and removes its folder. */
  close(): Promise<void>;
}

/** Tables the project writes, children first. */
const TABLES = ['docflow_history', 'docflows', 'ledger', 'feed', 'operator_actions', 'deployment'] as const;

export async function openBenchDatabase(): Promise<BenchDatabase> {
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
  return {
    db: opened,
    url: `sqlite:${path}`,
    async clear() {
      await opened.transaction(async (trx) => {
        for (const table of TABLES) await trx.deleteFrom(table).execute();
      });
    },
    async close() {
      try {
        await opened.close();
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

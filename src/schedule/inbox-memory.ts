/**
 * The nightly inbox's memory of what ran, in the database (the table `inbox_files`): a file's
 * content (its sha256) that ran to the end is not run again under any name, whatever became of
 * Redis. Remembered as long as the ledger's entries (REALTY_LEDGER_DAYS): past that, the ledger
 * would not stop its deals either.
 */
import { resolve } from 'node:path';
import type { Database } from '../db/database.js';

export interface DoneEntry {
  file: string;
  batch: string;
  at: string;
}

/** The run that took this content to the end, while it is remembered. */
export async function findDone(db: Database, inbox: string, sha256: string, now = Date.now()): Promise<DoneEntry | undefined> {
  const row = await db.kysely
    .selectFrom('inbox_files')
    .select(['file', 'batch', 'at'])
    .where('inbox', '=', resolve(inbox))
    .where('sha256', '=', sha256)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row;
}

/** This content ran to the end: remembered for `forMs`. */
export async function rememberDone(db: Database, inbox: string, sha256: string, entry: DoneEntry, forMs: number): Promise<void> {
  const values = { inbox: resolve(inbox), sha256, ...entry, expires_at: Date.now() + forMs };
  await db.kysely
    .insertInto('inbox_files')
    .values(values)
    .onConflict((oc) =>
      oc.columns(['inbox', 'sha256']).doUpdateSet({ file: entry.file, batch: entry.batch, at: entry.at, expires_at: values.expires_at }),
    )
    .execute();
}

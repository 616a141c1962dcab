/**
 * A batch's outcomes as the database keeps them (the table `outcomes`, src/ledger/outcome-rows.ts),
 * read and written the way the product does: for tests that look into (or change) a row's stored
 * outcome itself.
 */
import type { Database } from '../../src/db/database.js';
import { readOutcome, writeOutcome } from '../../src/ledger/outcome-rows.js';
import { recordOf } from '../../src/ledger/outcome-rows.js';
import type { OutcomeRecord } from '../../src/domain/outcome.js';

/** Every stored outcome of the batch, in row order. */
export async function storedOutcomes(db: Database, batch: string): Promise<OutcomeRecord[]> {
  const rows = await db.kysely.selectFrom('outcomes').selectAll().where('batch', '=', batch).orderBy('row').execute();
  return rows.map(recordOf);
}

/** Row `row`'s stored outcome; undefined when it has none. */
export async function storedOutcome(db: Database, batch: string, row: number): Promise<OutcomeRecord | undefined> {
  return readOutcome(db.kysely, batch, row);
}

/** Writes (or replaces) a row's outcome as it stands, nothing else: a test's setting. */
export async function putOutcome(db: Database, batch: string, record: OutcomeRecord): Promise<void> {
  await db.transaction(async (trx) => writeOutcome(trx, batch, record, await db.now(trx)));
}

/** Takes a row's outcome away (as `retry` does before the row's new job runs). */
export async function deleteOutcome(db: Database, batch: string, row: number): Promise<void> {
  await db.kysely.deleteFrom('outcomes').where('batch', '=', batch).where('row', '=', row).execute();
}

/** How many rows of the batch have an outcome. */
export async function outcomeCount(db: Database, batch: string): Promise<number> {
  const rows = await db.kysely.selectFrom('outcomes').select('row').where('batch', '=', batch).execute();
  return rows.length;
}

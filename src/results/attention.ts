/**
 * The attention file: every row that needs a person, in the input's own format,
 * its columns after four of ours: `row` (its number in the input), `outcome`,
 * `hint` (in Russian or English) and `errors`. Fixed and loaded again as it is,
 * its rows run: the loader ignores the four columns. People open it in Excel, so
 * a CSV one is written as Russian Excel opens it (`;`, CRLF, UTF-8 with a BOM)
 * unless `asInput` keeps the input's own delimiter, encoding and line ending.
 *
 * The rows come from the input file itself, read again (after checking it is
 * unchanged), so no personal data has to stay in Redis for it.
 */
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Lang } from '../config.js';
import { createRowsWriter } from '../input/rejects.js';
import { reopenInput } from '../input/reading.js';
import { createBatchStore, noSuchBatch } from '../batch/batch-store.js';
import { createOutcomeStore } from '../outcomes/store.js';
import { withStatus } from '../outcomes/batch-outcomes.js';
import { ATTENTION_OUTCOMES, type OutcomeRecord } from '../outcomes/types.js';
import { batchBank, readDocflowStatuses, rowDocflows } from '../ledger/docflows.js';
import type { Keys } from '../redis/keys.js';
import { duplicateHintFor, hintFor, stateHintFor } from './hints.js';
import { DUPLICATE_CODE } from '../db/duplicates.js';

/**
 * A submitted row whose docflow waits for the bank (a signature, a payment) or that the
 * registry refused: a person acts on it too, though nothing is sent again by loading it.
 */
export function stateNeedsAttention(record: OutcomeRecord): boolean {
  return record.state === 'error' || (record.state === 'suspended' && record.requirement !== undefined);
}

/** The attention file's columns of ours, first, in this order. */
export const ATTENTION_COLUMNS = ['row', 'outcome', 'hint', 'errors'] as const;

export interface AttentionOptions {
  redis: Redis;
  keys: Keys;
  /** The system of record: the docflows' states. */
  db: Database;
  batch: string;
  out: string;
  /** The input, when it is no longer where the batch was loaded from. */
  input?: string;
  /** The hints' language; English when not given. */
  lang?: Lang;
  /** A CSV input's own delimiter, encoding and line ending instead of Russian Excel's form. */
  asInput?: boolean;
  /** Rows without an outcome go in too, with this hint and these errors (a run stopped at its deadline). */
  pending?: { hint: string; errors: (row: number) => string };
}

const PAGE = 1000;

export async function writeAttention(options: AttentionOptions): Promise<{ file: string; rows: number }> {
  const { redis, keys, db, batch } = options;
  const meta = await createBatchStore(redis, keys, db).get(batch);
  if (!meta) throw noSuchBatch(redis, keys, batch);
  const bank = await batchBank(db, batch);
  const input = await reopenInput(meta, options.input);
  const store = createOutcomeStore(redis, keys, { db });
  // Written even when no row needs a person: an empty attention file says so.
  const writer = createRowsWriter(options.out, input, ATTENTION_COLUMNS, { always: true, excel: !options.asInput });
  let page: Array<OutcomeRecord | undefined> = [];
  let pageStart = 1;
  try {
    for await (const record of input.records()) {
      if (record.row >= pageStart + page.length) {
        pageStart = record.row;
        page = await store.range(batch, pageStart, pageStart + PAGE - 1);
        const statuses = await readDocflowStatuses(options.db, rowDocflows(bank, page));
        page = page.map((r, i) => r && withStatus(r, statuses[i]));
      }
      const outcome = page[record.row - pageStart];
      if (!outcome) {
        if (options.pending)
          await writer.write(record, {
            row: record.row,
            outcome: 'pending',
            hint: options.pending.hint,
            errors: options.pending.errors(record.row),
          });
        continue;
      }
      if (outcome.errorCode === DUPLICATE_CODE) {
        await writer.write(record, {
          row: record.row,
          outcome: outcome.outcome,
          hint: duplicateHintFor(outcome, options.lang),
          errors: outcome.errorMessage ?? '',
        });
      } else if (ATTENTION_OUTCOMES.has(outcome.outcome)) {
        await writer.write(record, {
          row: record.row,
          outcome: outcome.outcome,
          hint: hintFor(outcome, batch, options.lang),
          errors: outcome.errorMessage ?? '',
        });
      } else if (stateNeedsAttention(outcome)) {
        await writer.write(record, {
          row: record.row,
          outcome: outcome.outcome,
          hint: stateHintFor(outcome, batch, options.lang),
          errors: outcome.registryError ?? '',
        });
      }
    }
  } catch (err) {
    // The previous attention file stays as it was: nothing half-written takes its place.
    await writer.abort();
    throw err;
  }
  return writer.close();
}

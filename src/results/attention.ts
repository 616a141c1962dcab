/**
 * The attention file: every row that needs a person, in the input's own format,
 * its columns after four of ours: `row` (its number in the input), `outcome`,
 * `hint` and `errors`, all four named and written in Russian under `--lang ru`
 * (russian.ts). Fixed and loaded again as it is, its rows run: the loader ignores
 * the four columns by either name. People open it in Excel, so
 * a CSV one is written as Russian Excel opens it (`;`, CRLF, UTF-8 with a BOM)
 * unless `asInput` keeps the input's own delimiter, encoding and line ending.
 *
 * The rows come from the input file itself, read again (after checking it is
 * unchanged), so no personal data has to stay in Redis for it.
 */
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Lang } from '../config.js';
import { createRowsWriter, ownHeaders } from '../input/rejects.js';
import { reopenInput } from '../input/reading-options.js';
import { createBatchStore, noSuchBatch } from '../batch/batch-store.js';
import { createOutcomeStore } from '../outcomes/store.js';
import { withStatus } from '../outcomes/batch-outcomes.js';
import { ATTENTION_OUTCOMES, type Outcome, type OutcomeRecord } from '../domain/outcome.js';
import { batchBank, readDocflowStatuses, rowDocflows } from '../ledger/docflows.js';
import type { Keys } from '../redis/keys.js';
import { duplicateHintFor, hintFor, stateHintFor } from './hints.js';
import { DUPLICATE_CODE } from '../db/duplicates.js';
import { errorTextRu, OUTCOME_NAMES_RU } from './russian.js';

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
  /**
   * The language of the hints and, for Russian, of our columns' headers (in a CSV or workbook),
   * the outcome names and the errors' phrases (russian.ts); English when not given.
   */
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
  const russian = options.lang === 'ru';
  const writer = createRowsWriter(options.out, input, ATTENTION_COLUMNS, {
    always: true,
    excel: !options.asInput,
    headers: ownHeaders(ATTENTION_COLUMNS, options.lang),
  });
  const name = (outcome: Outcome): string => (russian ? OUTCOME_NAMES_RU[outcome] : outcome);
  const errorsOf = (record: Parameters<typeof errorTextRu>[0]): string => (russian ? errorTextRu(record) : (record.errorMessage ?? ''));
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
            outcome: name('pending'),
            hint: options.pending.hint,
            errors: errorsOf({ outcome: 'pending', errorMessage: options.pending.errors(record.row) }),
          });
        continue;
      }
      if (outcome.errorCode === DUPLICATE_CODE) {
        await writer.write(record, {
          row: record.row,
          outcome: name(outcome.outcome),
          hint: duplicateHintFor(outcome, options.lang),
          errors: errorsOf(outcome),
        });
      } else if (ATTENTION_OUTCOMES.has(outcome.outcome)) {
        await writer.write(record, {
          row: record.row,
          outcome: name(outcome.outcome),
          hint: hintFor(outcome, batch, options.lang),
          errors: errorsOf(outcome),
        });
      } else if (stateNeedsAttention(outcome)) {
        await writer.write(record, {
          row: record.row,
          outcome: name(outcome.outcome),
          hint: stateHintFor(outcome, batch, options.lang),
          // The registry's own words, as it wrote them.
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

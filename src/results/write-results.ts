/**
 * The results file of product.md: one line per input row, in input order, from
 * the stored outcomes; rows without one are `pending`. Read in pages, so a
 * million-row batch never sits in memory; written whole or not at all (a Redis
 * or disk failure part-way leaves the previous file as it was).
 */
import { stringify } from 'csv-stringify';
import { createAtomicFile } from '../files/atomic-file.js';
// The same rule as the rejects and attention files, kept with the loader that reads it back.
import { QUOTE_LINE_BREAKS, safeCell } from '../input/csv-cell.js';
import type { RedisClient as Redis } from '../queue/connection.js';
import type { Keys } from '../queue/keys.js';
import { createOutcomeStore } from '../outcomes/store.js';
import { OUTCOMES, RESULT_COLUMNS, type Outcome, type OutcomeRecord } from '../outcomes/types.js';

export interface WriteResultsOptions {
  redis: Redis;
  keys: Keys;
  batch: string;
  total: number;
  out: string;
  /** For Russian Excel: BOM, `;`, CRLF. */
  excel?: boolean;
  /** Stops the writing: the previous file stays. */
  signal?: AbortSignal;
}

export interface ResultsSummary {
  file: string;
  rows: number;
  counts: Record<Outcome, number>;
}

const PAGE = 1000;

export function emptyCounts(): Record<Outcome, number> {
  return Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
}

/** Every row's outcome, in input order, `pending` where there is none yet. */
export async function* batchOutcomes(redis: Redis, keys: Keys, batch: string, total: number): AsyncGenerator<OutcomeRecord> {
  const store = createOutcomeStore(redis, keys);
  for (let from = 1; from <= total; from += PAGE) {
    const to = Math.min(total, from + PAGE - 1);
    const page = await store.range(batch, from, to);
    const missing = page.flatMap((r, i) => (r ? [] : [from + i]));
    const dealIds = missing.length > 0 ? await redis.hmget(keys.rows(batch), ...missing.map(String)) : [];
    let m = 0;
    for (let i = 0; i < page.length; i++) {
      const record = page[i];
      if (record) yield record;
      else yield { row: from + i, dealId: dealIds[m++] ?? '', outcome: 'pending', attempts: 0, finishedAt: '' };
    }
  }
}

export async function writeResults(options: WriteResultsOptions): Promise<ResultsSummary> {
  const { out } = options;
  const jsonl = out.endsWith('.jsonl');
  const counts = emptyCounts();
  let rows = 0;
  const sink = jsonl
    ? undefined
    : stringify({
        header: true,
        columns: [...RESULT_COLUMNS],
        bom: options.excel ?? false,
        delimiter: options.excel ? ';' : ',',
        record_delimiter: options.excel ? '\r\n' : '\n',
        cast: { string: safeCell },
        // A bare CR (or LF under --excel's CRLF) in the gateway's text is no end of a row.
        quoted_match: QUOTE_LINE_BREAKS,
      });
  // Written beside `out` and renamed over it at the end: a failure part-way leaves the previous file.
  const file = await createAtomicFile(out, { through: sink ? [sink] : [], signal: options.signal });
  try {
    for await (const record of batchOutcomes(options.redis, options.keys, options.batch, options.total)) {
      rows++;
      counts[record.outcome]++;
      if (sink) await file.write(Object.fromEntries(RESULT_COLUMNS.map((c) => [c, record[c] ?? ''])));
      else await file.write(`${JSON.stringify(Object.fromEntries(RESULT_COLUMNS.map((c) => [c, record[c] ?? null])))}\n`);
    }
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
  return { file: out, rows, counts };
}

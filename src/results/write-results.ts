/**
 * The results file (docs/results.md, "The results file"): one line per input row, in input order, from
 * the stored outcomes; rows without one are `pending`. Read in pages, so a
 * million-row batch never sits in memory; written whole or not at all (a Redis
 * or disk failure part-way leaves the previous file as it was).
 */
import { createAtomicFile, PRIVATE_FILE_MODE } from '../files/atomic-file.js';
import { isXlsxPath } from '../input/rejects.js';
import { csvSink } from './csv-sink.js';
import { createTableFile, type TableFile } from './table-file.js';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';
import { DUPLICATE_CODE } from '../db/duplicates.js';
import { emptyCounts, RESULTS_FILE_COLUMNS, type Outcome, type OutcomeRecord } from '../domain/outcome.js';
import { createStateTally, type StateCounts } from '../outcomes/state-tally.js';
import { withOrigins } from './docflow-origins.js';
import type { Lang } from '../config.js';
import { columnHeaders, russianCells } from './russian.js';

/** Rows written per page: their docflows' requestIds are read together when their outcomes lack them. */
const PAGE = 500;

export interface WriteResultsOptions {
  redis: Redis;
  keys: Keys;
  /** The system of record: the docflows' states. */
  db: Database;
  batch: string;
  total: number;
  out: string;
  /** For Russian Excel: BOM, `;`, CRLF. */
  excel?: boolean;
  /**
   * The language of a file for a person (`--excel` or `.xlsx`): `ru` gives Russian headers,
   * outcome and state names and error phrases (russian.ts). The plain CSV and JSON Lines stay
   * the contract, in English codes, whatever this says.
   */
  lang?: Lang;
  /** Stops the writing: the previous file stays. */
  signal?: AbortSignal;
  /** The errorMessage of a row without an outcome (a run stopped at its deadline says why it waits). */
  pendingMessage?: (row: number) => string | undefined;
}

export interface ResultsSummary {
  file: string;
  rows: number;
  counts: Record<Outcome, number>;
  /** Rows whose deal has two docflows at the gateway (errorCode DUPLICATE_DOCFLOW): they need a person. */
  duplicates: number;
  /** The rows by docflow state, and whether the batch is registered (every row final). */
  states: StateCounts;
}

export async function writeResults(options: WriteResultsOptions): Promise<ResultsSummary> {
  const { out } = options;
  const jsonl = out.endsWith('.jsonl');
  const xlsx = isXlsxPath(out);
  const counts = emptyCounts();
  const tally = createStateTally();
  let rows = 0;
  let duplicates = 0;
  const russian = options.lang === 'ru' && !jsonl && (xlsx || options.excel === true);
  const headers = columnHeaders(RESULTS_FILE_COLUMNS, russian ? 'ru' : 'en');
  const sink = jsonl || xlsx ? undefined : csvSink(RESULTS_FILE_COLUMNS, options.excel, headers);
  // Written beside `out` and renamed over it at the end: a failure part-way leaves the previous file.
  // Created 0600: a row's dealId and the gateway's texts are the bank's business alone.
  const file: TableFile = xlsx
    ? await createTableFile(out, RESULTS_FILE_COLUMNS, { signal: options.signal, mode: PRIVATE_FILE_MODE, headers })
    : await createAtomicFile(out, { through: sink ? [sink] : [], signal: options.signal, mode: PRIVATE_FILE_MODE });
  let page: OutcomeRecord[] = [];
  const flush = async (): Promise<void> => {
    for (const record of await withOrigins(options.db, page)) {
      const cells = (russian ? russianCells(record) : record) as Partial<Record<string, unknown>>;
      if (sink || xlsx) await file.write(Object.fromEntries(RESULTS_FILE_COLUMNS.map((c) => [c, cells[c] ?? ''])));
      else await file.write(`${JSON.stringify(Object.fromEntries(RESULTS_FILE_COLUMNS.map((c) => [c, record[c] ?? null])))}\n`);
    }
    page = [];
  };
  try {
    for await (const found of batchOutcomes(options.redis, options.keys, options.db, options.batch, options.total, { states: true })) {
      const note = found.outcome === 'pending' ? options.pendingMessage?.(found.row) : undefined;
      const record = note ? { ...found, errorMessage: note } : found;
      rows++;
      counts[record.outcome]++;
      if (record.errorCode === DUPLICATE_CODE) duplicates++;
      tally.add(record);
      page.push(record);
      if (page.length >= PAGE) await flush();
    }
    await flush();
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
  return { file: out, rows, counts, duplicates, states: tally.result(counts.pending === 0) };
}

/**
 * The per-batch figures of `/metrics` (`realty_batch_rows`, `realty_batch_loaded_timestamp_seconds`,
 * `realty_batch_last_progress_timestamp_seconds`), read when it is scraped.
 *
 * Which batches: the MAX_BATCHES most recently created (the database's batches), of those the
 * loaded ones that still have pending rows or whose latest row finished within RECENT_MS. An
 * older batch beyond that cap is not shown, even if unfinished.
 *
 * The cost: one query per scrape counts the listed batches' outcomes by kind (the index on
 * (batch, outcome) answers it without reading the rows) with each batch's latest finish; a
 * row's outcome replaced (`retry`) is counted as it stands at the next scrape.
 */
import type { Database } from '../db/database.js';
import { emptyCounts, OUTCOMES, type Outcome } from '../domain/outcome.js';

/** Batches looked at per scrape: the most recently created ones. */
export const MAX_BATCHES = 50;
/** A finished batch stays in the figures this long after its latest row finished. */
export const RECENT_MS = 24 * 60 * 60 * 1000;

export interface BatchFigures {
  batch: string;
  /** Rows per outcome, every outcome (0 included), `pending` for rows without one. */
  rows: Record<Outcome, number>;
  /** When the load finished (ms since epoch). */
  loadedAt: number;
  /** When the latest row finished, or the load when that is later (ms since epoch). */
  lastProgressAt: number;
}

const KNOWN: ReadonlySet<string> = new Set(OUTCOMES);

export interface BatchFiguresReader {
  read(now?: number): Promise<BatchFigures[]>;
}

export function createBatchFigures(db: Database): BatchFiguresReader {
  return {
    async read(now = Date.now()) {
      const listed = (
        await db.kysely
          .selectFrom('batches')
          .select(['id', 'total', 'loaded_at', 'state'])
          .orderBy('created_ms', 'desc')
          .orderBy('id', 'desc')
          .limit(MAX_BATCHES)
          .execute()
      ).filter((b) => b.state === 'loaded' && b.total !== null && b.loaded_at && Number.isFinite(Date.parse(b.loaded_at)));
      if (listed.length === 0) return [];
      const counted = await db.kysely
        .selectFrom('outcomes')
        .select([
          'batch',
          'outcome',
          (eb) => eb.fn.countAll<number | string | bigint>().as('n'),
          (eb) => eb.fn.max('finished_at').as('last'),
        ])
        .where(
          'batch',
          'in',
          listed.map((b) => b.id),
        )
        .groupBy(['batch', 'outcome'])
        .execute();
      const figures: BatchFigures[] = [];
      for (const b of listed) {
        const rows = emptyCounts();
        let last = 0;
        let done = 0;
        for (const c of counted) {
          if (c.batch !== b.id) continue;
          const n = Number(c.n);
          done += n;
          if (KNOWN.has(c.outcome) && c.outcome !== 'pending') rows[c.outcome as Outcome] += n;
          const at = c.last ? Date.parse(c.last) : NaN;
          if (Number.isFinite(at)) last = Math.max(last, at);
        }
        rows.pending = Math.max(0, Number(b.total) - done);
        const loadedAt = Date.parse(b.loaded_at!);
        const lastProgressAt = Math.max(loadedAt, last);
        if (rows.pending === 0 && now - lastProgressAt > RECENT_MS) continue;
        figures.push({ batch: b.id, rows, loadedAt, lastProgressAt });
      }
      return figures;
    },
  };
}

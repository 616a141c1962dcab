/**
 * The per-batch figures of `/metrics` (`realty_batch_rows`, `realty_batch_loaded_timestamp_seconds`,
 * `realty_batch_last_progress_timestamp_seconds`), read when it is scraped.
 *
 * Which batches: the MAX_BATCHES most recently created in the batches index (one ZREVRANGE,
 * never a SCAN), of those the loaded ones that still have pending rows or whose latest row
 * finished within RECENT_MS. An older batch beyond that cap is not shown, even if unfinished.
 *
 * The cost: Redis keeps a row's outcome as one JSON value of the batch's outcomes hash, and no
 * count per outcome, so counting a batch's outcomes reads its rows (HMGET pages of 1000). Each
 * batch's counts are kept in this process and read again when its number of outcomes (HLEN,
 * one command) has changed since, or RECOUNT_MS after they were read (a row whose outcome was
 * replaced, as `retry` does, may leave HLEN as it was): a finished batch is read once every
 * RECOUNT_MS while it is shown, and not again once it is left out (until its HLEN changes).
 * At most ROW_BUDGET rows are read per scrape (but the first batch counted in a scrape is read
 * whole): past that, a batch keeps its counts of an earlier scrape (its pending rows still from
 * its HLEN), and one never counted yet waits for a later scrape.
 */
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { emptyCounts, OUTCOMES, type Outcome } from '../outcomes/types.js';
import { createOutcomeStore } from '../outcomes/store.js';

/** Batches looked at per scrape: the most recently created ones. */
export const MAX_BATCHES = 50;
/** A finished batch stays in the figures this long after its latest row finished. */
export const RECENT_MS = 24 * 60 * 60 * 1000;
/** Rows read per scrape, at most, to count outcomes. */
export const ROW_BUDGET = 200_000;
/** Counts this old are read again even when the batch's number of outcomes has not changed. */
export const RECOUNT_MS = 5 * 60 * 1000;
const PAGE = 1000;

export interface BatchFigures {
  batch: string;
  /** Rows per outcome, every outcome (0 included), `pending` for rows without one. */
  rows: Record<Outcome, number>;
  /** When the load finished (ms since epoch). */
  loadedAt: number;
  /** When the latest row finished, or the load when that is later (ms since epoch). */
  lastProgressAt: number;
}

interface Counted {
  /** The outcomes hash's length when counted. */
  finished: number;
  counts: Record<Outcome, number>;
  /** The latest finishedAt among the rows (ms), 0 when none. */
  last: number;
  /** When they were read (ms). */
  at: number;
}

const KNOWN: ReadonlySet<string> = new Set(OUTCOMES);

async function countRows(redis: Redis, keys: Keys, batch: string, total: number): Promise<Pick<Counted, 'counts' | 'last'>> {
  const counts = emptyCounts();
  const store = createOutcomeStore(redis, keys);
  let last = 0;
  for (let from = 1; from <= total; from += PAGE) {
    for (const record of await store.range(batch, from, Math.min(total, from + PAGE - 1))) {
      if (!record) continue;
      if (KNOWN.has(record.outcome) && record.outcome !== 'pending') counts[record.outcome]++;
      const at = record.finishedAt ? Date.parse(record.finishedAt) : NaN;
      if (Number.isFinite(at)) last = Math.max(last, at);
    }
  }
  return { counts, last };
}

interface Listed {
  batch: string;
  total: number;
  loadedAt: number;
  finished: number;
}

/** The loaded batches among the MAX_BATCHES most recent, with their total and outcome count: two round trips. */
async function listBatches(redis: Redis, keys: Keys): Promise<Listed[]> {
  const ids = await redis.zrevrange(keys.batches, 0, MAX_BATCHES - 1);
  if (ids.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const id of ids) pipeline.hmget(keys.batch(id), 'state', 'total', 'loadedAt').hlen(keys.outcomes(id));
  const replies = (await pipeline.exec()) ?? [];
  const listed: Listed[] = [];
  ids.forEach((batch, i) => {
    const [metaErr, meta] = replies[2 * i] ?? [];
    const [lenErr, finished] = replies[2 * i + 1] ?? [];
    if (metaErr) throw metaErr;
    if (lenErr) throw lenErr;
    const [state, total, loadedAt] = (meta ?? []) as Array<string | null>;
    const loaded = loadedAt ? Date.parse(loadedAt) : NaN;
    if (state !== 'loaded' || total === null || !Number.isFinite(Number(total)) || !Number.isFinite(loaded)) return;
    listed.push({ batch, total: Number(total), loadedAt: loaded, finished: Number(finished) });
  });
  return listed;
}

/**
 * Whether a batch's rows are to be read (again): never counted, its number of outcomes changed,
 * or its counts are RECOUNT_MS old, but for a finished batch left out already (no row for RECENT_MS).
 */
function needsCount(b: Listed, counted: Counted | undefined, now: number): boolean {
  if (!counted || counted.finished !== b.finished) return true;
  if (now - counted.at < RECOUNT_MS) return false;
  return b.finished < b.total || now - Math.max(b.loadedAt, counted.last) <= RECENT_MS;
}

export interface BatchFiguresReader {
  read(now?: number): Promise<BatchFigures[]>;
}

export function createBatchFigures(redis: Redis, keys: Keys): BatchFiguresReader {
  const cache = new Map<string, Counted>();
  return {
    async read(now = Date.now()) {
      const listed = await listBatches(redis, keys);
      let budget = ROW_BUDGET;
      const figures: BatchFigures[] = [];
      for (const b of listed) {
        let counted = cache.get(b.batch);
        if (needsCount(b, counted, now) && (b.total <= budget || budget === ROW_BUDGET)) {
          budget = Math.max(0, budget - b.total);
          counted = { finished: b.finished, at: now, ...(await countRows(redis, keys, b.batch, b.total)) };
          cache.set(b.batch, counted);
        }
        if (!counted) continue;
        const rows = { ...counted.counts };
        const done = OUTCOMES.reduce((sum, o) => (o === 'pending' ? sum : sum + rows[o]), 0);
        // Counted now: total minus the outcomes read; counted earlier (out of budget): from HLEN.
        rows.pending = Math.max(0, b.total - (counted.finished === b.finished ? done : b.finished));
        const lastProgressAt = Math.max(b.loadedAt, counted.last);
        if (rows.pending === 0 && now - lastProgressAt > RECENT_MS) continue;
        figures.push({ batch: b.batch, rows, loadedAt: b.loadedAt, lastProgressAt });
      }
      // Batches gone from the index (expired) or past the cap leave the cache.
      const seen = new Set(listed.map((b) => b.batch));
      for (const batch of cache.keys()) if (!seen.has(batch)) cache.delete(batch);
      return figures;
    },
  };
}

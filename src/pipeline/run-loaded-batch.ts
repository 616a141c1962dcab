/**
 * A loaded batch to its end, the one way `run` and a nightly tick both take: the wait until
 * every row has its outcome, the news feed's catch-up past the resent deals, the deadline's
 * notes, the results and attention files, and the exit code. What differs between them comes
 * in as options: `run` waits with its own deal worker, the inbox with a queue alone while it
 * watches its input, and it gives the batch up when the input changed.
 */
import type { Queue } from 'bullmq';
import type { Lang } from '../config.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { batchExitCode } from '../batch/exit-code.js';
import { waitUntilFeedShows } from '../batch/feed-shown.js';
import { findMissingRows, type MissingRows } from '../batch/missing-rows.js';
import { waitForBatch, type StopReason, type WaitOptions } from '../batch/wait-batch.js';
import { writeAttention } from '../results/attention.js';
import { deadlineNotes, type DeadlineNotes } from '../results/deadline-hint.js';
import { writeResults, type ResultsSummary } from '../results/write-results.js';

/** What runs while the batch is waited for: the queue the wait watches (to see it paused), and what ends with the wait. */
export interface BatchWatch {
  queue: Queue;
  /** Called once the wait and the feed's catch-up end, before anything is written (a worker closed, a watch stopped). */
  close: () => Promise<unknown>;
}

/** Where the attention file goes, and whether in the input's own CSV form (attention.ts). */
export interface AttentionFile {
  out: string;
  asInput?: boolean;
}

/** The attention file written: where, and its rows. */
export interface WrittenAttention {
  file: string;
  rows: number;
}

export interface LoadedBatchOptions {
  redis: Redis;
  keys: Keys;
  /** The system of record: the outcomes, the ledger, the docflows' states. */
  db: Database;
  /** The batch's logger. */
  logger: Logger;
  batch: string;
  /** The rows the load read. */
  total: number;
  /** Opens what the wait runs with (`run`: its deal worker; the inbox: a queue and the input's watch). */
  open: () => BatchWatch | Promise<BatchWatch>;
  /** Stops the wait: unfinished rows are written `pending`. */
  signal?: AbortSignal;
  onProgress?: WaitOptions['onProgress'];
  /** When to stop waiting (ms since the epoch): unfinished rows keep their jobs and are written `pending`, exit 3. */
  deadline?: number;
  pollMs?: number;
  stallMs?: number;
  /**
   * The wait for the news feed past the batch's resent deals once every row has its outcome
   * (src/batch/feed-shown.ts); none when not given (no follower reads the feed).
   */
  feed?: { feedLagMs: number; timeoutMs: number; signal?: AbortSignal };
  /** Asked once the wait ends: false gives the batch up before anything is written (the inbox's input changed). */
  goOn?: () => boolean;
  results: { out: string; excel?: boolean };
  /** The attention file; none when not given. */
  attention?: AttentionFile;
  /** The files' language for a person (results.ts, attention.ts). */
  lang?: Lang;
}

export interface LoadedBatchResult {
  /** Why the wait ended before every row finished, when it did. */
  stopped?: StopReason;
  /** The rows with neither a job nor an outcome, when that stopped the wait. */
  missing?: MissingRows;
  /** What the files say of the rows left pending by the deadline, when it stopped the wait. */
  notes?: DeadlineNotes;
  results: ResultsSummary;
  attention?: WrittenAttention;
  exitCode: 0 | 1 | 3;
}

/** The batch's end; undefined when `goOn` gave it up. With an attention file asked for, its summary is there. */
export async function runLoadedBatch(options: LoadedBatchOptions & { goOn?: undefined }): Promise<LoadedBatchResult>;
export async function runLoadedBatch(
  options: LoadedBatchOptions & { attention: AttentionFile },
): Promise<(LoadedBatchResult & { attention: WrittenAttention }) | undefined>;
export async function runLoadedBatch(options: LoadedBatchOptions): Promise<LoadedBatchResult | undefined>;
export async function runLoadedBatch(options: LoadedBatchOptions): Promise<LoadedBatchResult | undefined> {
  const { redis, keys, db, batch, total, lang } = options;
  let stopped: StopReason | undefined;
  const watch = await options.open();
  try {
    stopped = await waitForBatch({
      redis,
      keys,
      db,
      queue: watch.queue,
      batch,
      total,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.pollMs ? { pollMs: options.pollMs } : {}),
      ...(options.stallMs ? { stallMs: options.stallMs } : {}),
      ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    });
    // Every row has its outcome: the feed is read past the resent deals (and so any earlier docflow a
    // late feed let a resend duplicate) before the results are written. Only while a follower runs.
    if (stopped === undefined && options.feed) await feedPastResends(db, batch, options.feed, options.logger);
  } finally {
    await watch.close();
  }
  if (options.goOn && !options.goOn()) return undefined;
  const missing = stopped === 'missing' ? await findMissingRows(redis, keys, db, batch, total) : undefined;
  // At the deadline the unfinished rows keep their jobs (a later `work` or `run` finishes them,
  // once each): their lines say why they wait, when they are tried next, and what to run.
  const notes = stopped === 'deadline' ? await deadlineNotes(redis, keys, batch, lang) : undefined;
  const results = await writeResults({
    redis,
    keys,
    db,
    batch,
    total,
    out: options.results.out,
    excel: options.results.excel,
    lang,
    ...(notes && { pendingMessage: notes.errors }),
  });
  // The attention file reads the input again: the inbox writes it before the input moves.
  const attention = options.attention
    ? await writeAttention({
        redis,
        keys,
        db,
        batch,
        out: options.attention.out,
        lang,
        ...(options.attention.asInput !== undefined && { asInput: options.attention.asInput }),
        ...(notes && { pending: notes }),
      })
    : undefined;
  return {
    results,
    exitCode: batchExitCode(stopped, results),
    ...(stopped ? { stopped } : {}),
    ...(missing ? { missing } : {}),
    ...(notes ? { notes } : {}),
    ...(attention ? { attention } : {}),
  };
}

/** src/batch/feed-shown.ts's wait, and its warn line when it runs out. */
async function feedPastResends(db: Database, batch: string, feed: NonNullable<LoadedBatchOptions['feed']>, log: Logger): Promise<void> {
  const { timeoutMs } = feed;
  const unseen = await waitUntilFeedShows(db, batch, {
    feedLagMs: feed.feedLagMs,
    timeoutMs,
    ...(feed.signal ? { signal: feed.signal } : {}),
  });
  if (unseen > 0)
    log.warn(
      { unseen, waitedMs: timeoutMs },
      'the news feed was not read far enough past the resent deals of this batch: a second docflow of those deals cannot be ruled out yet (realty-batch status tells once the feed shows one)',
    );
}

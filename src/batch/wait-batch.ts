/**
 * Waiting until every row of a batch has its outcome: what `run` and a nightly
 * tick do while workers (in-process or anywhere) process the batch.
 */
import type { Database } from '../db/database.js';
import type { Queue } from 'bullmq';
import type { RedisClient as Redis } from '../redis/connection.js';
import { createOutcomeStore } from '../outcomes/store.js';
import type { Keys } from '../redis/keys.js';
import { findMissingRows } from './missing-rows.js';
import { findWaitingRows } from './waiting-rows.js';

/**
 * Why a wait ended before every row finished: a refused session, a signal, a queue paused
 * by someone, rows left with neither a job nor an outcome (nothing would finish them), or
 * the deadline (`--deadline`) came first.
 */
export type StopReason = 'session' | 'signal' | 'paused' | 'missing' | 'deadline';

/** Rows of the batch waiting for a retry (BullMQ's delayed set), and the earliest next try. */
export interface WaitingSummary {
  count: number;
  /** ms since the epoch. */
  nextAt?: number;
}

/** With no new outcome for this long, the wait looks for rows whose jobs are gone. */
const STALL_MS = 5000;
/** How often the waiting rows are counted for the progress (a scan of the delayed set). */
const WAITING_EVERY_MS = 1000;

export interface WaitOptions {
  redis: Redis;
  keys: Keys;
  /** The database the outcomes are in. */
  db: Database;
  /** The deal queue, to see it paused. */
  queue: Queue;
  batch: string;
  total: number;
  signal?: AbortSignal;
  /** Rows finished so far, of the total, and the rows waiting for a retry (looked at about once a second). */
  onProgress?: (done: number, total: number, waiting: WaitingSummary) => void;
  /** When to stop waiting (ms since the epoch): the unfinished rows keep their jobs, and the wait ends `deadline`. */
  deadline?: number;
  pollMs?: number;
  /** How long without a new outcome before rows are checked for a job (ms). */
  stallMs?: number;
}

/** Resolves when the batch is done (undefined), or with why it stopped early. */
export async function waitForBatch(options: WaitOptions): Promise<StopReason | undefined> {
  const { redis, keys, db, batch, total } = options;
  const outcomes = createOutcomeStore(redis, keys, { db });
  const pollMs = options.pollMs ?? 200;
  const stallMs = options.stallMs ?? STALL_MS;
  let last = -1;
  let lastChange = Date.now();
  let nextCheck = 0;
  /** Rows found missing by the previous look: they must be missing twice, a moment apart. */
  let suspects: string | undefined;
  let waiting: WaitingSummary = { count: 0 };
  let nextWaitingLook = 0;
  // The deadline ends the wait as a signal does, on its own reason.
  const deadline = options.deadline === undefined ? undefined : new AbortController();
  const timer = deadline ? setTimeout(() => deadline.abort(), Math.max(0, options.deadline! - Date.now())) : undefined;
  const signal = deadline && options.signal ? AbortSignal.any([options.signal, deadline.signal]) : (options.signal ?? deadline?.signal);
  try {
    for (;;) {
      const stop = await look();
      if (stop !== 'go on') return stop;
      await untilAborted(new Promise((resolve) => setTimeout(resolve, pollMs)), signal);
    }
  } finally {
    clearTimeout(timer);
  }

  /** One look at the batch: done (undefined), why it stops, or 'go on'. */
  async function look(): Promise<StopReason | undefined | 'go on'> {
    // While Redis is away the count waits for it (a worker outlives a restart);
    // a signal or the deadline still ends the wait.
    const done = await untilAborted(outcomes.count(batch), signal);
    if (done === undefined) return stopped();
    if (done < total && !(await lookAtWaiting())) return stopped();
    options.onProgress?.(done, total, done >= total ? { count: 0 } : waiting);
    if (done >= total) return undefined;
    if (deadline?.signal.aborted) return 'deadline';
    if (await options.queue.isPaused()) return (await redis.get(keys.pauseReason)) === 'session' ? 'session' : 'paused';
    const now = Date.now();
    if (done !== last) {
      last = done;
      lastChange = now;
      suspects = undefined;
    } else if (now - lastChange >= stallMs && now >= nextCheck) {
      // A quiet batch may be waiting on retries, or on rows whose jobs someone removed:
      // looked at while quiet, and less often the longer a look takes on a large batch.
      const began = Date.now();
      const missing = await findMissingRows(redis, keys, db, batch, total);
      nextCheck = Date.now() + Math.max(stallMs, 10 * (Date.now() - began));
      const seen = missing.count > 0 ? `${missing.count}:${missing.rows.join(',')}` : undefined;
      if (seen && seen === suspects) return 'missing';
      suspects = seen;
      // Seen once: looked at again a second later (a job being made again by `retry` is gone for an instant).
      if (seen) nextCheck = Date.now() + 1000;
    }
    return 'go on';
  }

  /** Counts the rows waiting for a retry, for the progress, about once a second; false when stopped meanwhile. */
  async function lookAtWaiting(): Promise<boolean> {
    if (!options.onProgress || Date.now() < nextWaitingLook) return true;
    const began = Date.now();
    // Only for the progress: a failed look keeps the last count rather than ending the wait.
    const found = await untilAborted(
      findWaitingRows(redis, keys, batch).catch(() => waiting),
      signal,
    );
    if (found === undefined) return false;
    waiting = { count: found.count, ...(found.nextAt !== undefined && { nextAt: found.nextAt }) };
    // Less often the longer a look takes: a delayed set of a big outage is scanned, not polled.
    nextWaitingLook = Date.now() + Math.max(WAITING_EVERY_MS, 10 * (Date.now() - began));
    return true;
  }

  function stopped(): StopReason {
    return options.signal?.aborted ? 'signal' : 'deadline';
  }
}

/** The promise's value, or undefined as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

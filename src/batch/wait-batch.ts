/**
 * Waiting until every row of a batch has its outcome: what `run` and a nightly
 * tick do while workers (in-process or anywhere) process the batch.
 */
import type { Queue } from 'bullmq';
import type { RedisClient as Redis } from '../redis/connection.js';
import { createOutcomeStore } from '../outcomes/store.js';
import type { Keys } from '../redis/keys.js';
import { findMissingRows } from './missing-rows.js';

/**
 * Why a wait ended before every row finished: a refused session, a signal, a queue paused
 * by someone, or rows left with neither a job nor an outcome (nothing would finish them).
 */
export type StopReason = 'session' | 'signal' | 'paused' | 'missing';

/** With no new outcome for this long, the wait looks for rows whose jobs are gone. */
const STALL_MS = 5000;

export interface WaitOptions {
  redis: Redis;
  keys: Keys;
  /** The deal queue, to see it paused. */
  queue: Queue;
  batch: string;
  total: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  pollMs?: number;
  /** How long without a new outcome before rows are checked for a job (ms). */
  stallMs?: number;
}

/** Resolves when the batch is done (undefined), or with why it stopped early. */
export async function waitForBatch(options: WaitOptions): Promise<StopReason | undefined> {
  const { redis, keys, batch, total } = options;
  const outcomes = createOutcomeStore(redis, keys);
  const pollMs = options.pollMs ?? 200;
  const stallMs = options.stallMs ?? STALL_MS;
  let last = -1;
  let lastChange = Date.now();
  let nextCheck = 0;
  /** Rows found missing by the previous look: they must be missing twice, a moment apart. */
  let suspects: string | undefined;
  for (;;) {
    // While Redis is away the count waits for it (a worker outlives a restart);
    // a signal still ends the wait.
    const done = await untilAborted(outcomes.count(batch), options.signal);
    if (done === undefined) return 'signal';
    options.onProgress?.(done, total);
    if (done >= total) return undefined;
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
      const missing = await findMissingRows(redis, keys, batch, total);
      nextCheck = Date.now() + Math.max(stallMs, 10 * (Date.now() - began));
      const seen = missing.count > 0 ? `${missing.count}:${missing.rows.join(',')}` : undefined;
      if (seen && seen === suspects) return 'missing';
      suspects = seen;
      // Seen once: looked at again a second later (a job being made again by `retry` is gone for an instant).
      if (seen) nextCheck = Date.now() + 1000;
    }
    await untilAborted(new Promise((resolve) => setTimeout(resolve, pollMs)), options.signal);
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

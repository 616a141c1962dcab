/**
 * Waiting until every row of a batch has its outcome: what `run` and a nightly
 * tick do while workers (in-process or anywhere) process the batch.
 */
import type { Queue } from 'bullmq';
import type { RedisClient as Redis } from '../queue/connection.js';
import { createOutcomeStore } from '../outcomes/store.js';
import type { Keys } from '../queue/keys.js';

/** Why a wait ended before every row finished: a refused session, a signal, or a queue paused by someone. */
export type StopReason = 'session' | 'signal' | 'paused';

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
}

/** Resolves when the batch is done (undefined), or with why it stopped early. */
export async function waitForBatch(options: WaitOptions): Promise<StopReason | undefined> {
  const { redis, keys, batch, total } = options;
  const outcomes = createOutcomeStore(redis, keys);
  const pollMs = options.pollMs ?? 200;
  for (;;) {
    // While Redis is away the count waits for it (a worker outlives a restart);
    // a signal still ends the wait.
    const done = await untilAborted(outcomes.count(batch), options.signal);
    if (done === undefined) return 'signal';
    options.onProgress?.(done, total);
    if (done >= total) return undefined;
    if (await options.queue.isPaused()) return (await redis.get(keys.pauseReason)) === 'session' ? 'session' : 'paused';
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
        reject(e);
      },
    );
  });
}

/**
 * Wakes the rows whose lost answer the news feed just found. Such a row's job sleeps (a
 * delayed BullMQ job) until its try's end plus `--feed-lag-ms` (60 s by default) when its
 * claim came before the follower stored the docflow: promoted, it runs at once, its claim
 * finds the docflow the follower stored in the ledger, and the row ends with it, with no
 * call. A wake changes no row's verdict, only when the ledger is asked again: a job woken
 * for nothing (its row ended meanwhile, or it waits on something else) ends, or sleeps
 * again, as its claim says; nothing a woken job does sends a creation the ledger would not
 * have let it send anyway.
 */
import type { Queue } from 'bullmq';
import { TUNABLES } from '../config.js';
import type { Logger } from '../logger.js';
import { openQueue } from '../queue/deal-queue.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

export interface RowWaker {
  /** Wakes these jobs (their keys, as the ledger keeps them) in the background. */
  wake(jobKeys: readonly string[]): void;
  /** Stops looking again, lets wakes in flight end (1 s at most) and closes its queue. */
  close(): Promise<void>;
}

export function createRowWaker(redis: Redis, keys: Keys, log: Logger): RowWaker {
  // A job key is `<bull prefix>:<queue>:<job id>`; any other (another deployment's) is not ours to wake.
  const ours = `${keys.bullPrefix}:${keys.queueName}:`;
  let queue: Queue | undefined;
  let closed = false;
  const waking = new Map<string, Promise<void>>();

  // A pause of `wakeRetryMs` that does not hold the process open; close() waits it out.
  const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

  const wakeOne = async (id: string): Promise<void> => {
    queue ??= openQueue(redis, keys);
    for (let tries = 0; tries < TUNABLES.wakeTries && !closed; tries++) {
      try {
        // BullMQ's promote: delayed → waiting, atomically; it refuses a job that is not delayed.
        await queue.backend.promote(id);
        return;
      } catch {
        // Not delayed now: what is it?
      }
      const state = await queue.getJobState(id);
      // Waiting: it runs soon anyway. Finished, or gone: nothing to wake. Active: its claim may
      // have read the ledger before the page was stored, and it is about to sleep; delayed: it
      // just went to sleep. Either way, look again.
      if (state !== 'active' && state !== 'delayed') return;
      await pause(TUNABLES.wakeRetryMs);
    }
  };

  return {
    wake(jobKeys) {
      for (const key of jobKeys) {
        if (closed || !key.startsWith(ours)) continue;
        const id = key.slice(ours.length);
        if (waking.has(id)) continue;
        const woken = wakeOne(id)
          .catch((err: unknown) =>
            // The row is not lost: it sleeps its wait out and its claim finds the docflow then.
            log.warn(
              { err: { message: (err as Error).message } },
              'could not wake a row whose docflow the news feed found; it runs when its wait ends',
            ),
          )
          .finally(() => waking.delete(id));
        waking.set(id, woken);
      }
    },
    async close() {
      closed = true;
      await Promise.race([Promise.all(waking.values()), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      await queue?.close().catch(() => undefined);
    },
  };
}

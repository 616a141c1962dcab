/**
 * A deal queue paused because the gateway refused the session: the deal worker pauses
 * the queue and marks why (`keys.pauseReason` = `session`, src/worker/worker-services.ts).
 * A process that starts with a session (`run`, `work`) resumes it: if the session is
 * still refused, the first job pauses it again. A queue paused by someone else (the
 * dashboard, an operator) stays paused.
 */
import type { Queue } from 'bullmq';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

export interface SessionPause {
  redis: RedisClient;
  keys: Keys;
  queue: Pick<Queue, 'resume'>;
  logger: Logger;
  /** Who resumes it, for the warning: `for this run`, `with this worker's session`. */
  resumedBy: string;
}

/** Resumes the queue when a refused session paused it; true when it did. */
export async function resumeAfterRefusedSession({ redis, keys, queue, logger, resumedBy }: SessionPause): Promise<boolean> {
  if ((await redis.get(keys.pauseReason)) !== 'session') return false;
  await redis.del(keys.pauseReason);
  await queue.resume();
  logger.warn(`the queue was paused for a refused session; resumed ${resumedBy}`);
  return true;
}

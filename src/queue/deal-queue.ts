/**
 * The deal queue as every command opens it. BullMQ prints a Redis error with no
 * listener straight to the console, stack and all: each queue gets a listener,
 * and the command itself reports the failure once, in a sentence.
 */
import { Queue } from 'bullmq';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { OutcomeRecord } from '../domain/outcome.js';
import type { StoredJobData } from './job-data.js';
import type { Keys } from '../redis/keys.js';

/** Its jobs' data as their hashes hold it: `jobDataOf` reads it as a DealJobData. */
export function openQueue<T = StoredJobData, R = OutcomeRecord>(redis: Redis, keys: Keys, name: string = keys.queueName): Queue<T, R> {
  const queue = new Queue<T, R>(name, { connection: redis, prefix: keys.bullPrefix });
  queue.on('error', () => undefined);
  return queue;
}

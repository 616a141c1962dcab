/** The deal queue as loader tests use it: paused (nothing runs their jobs), and read back. */
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { dealOf, jobDataOf, withoutDeal, type DealJobData, type StoredJobData } from '../../src/queue/job-data.js';
import type { Keys } from '../../src/redis/keys.js';

/** Pauses the queue of `keys`, so that the jobs a load makes stay waiting, to be compared. */
export async function pauseDealQueue(redis: Redis, keys: Keys): Promise<void> {
  const queue = new Queue(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
  await queue.pause();
  await queue.close();
}

/** The data of the batch's waiting jobs. */
export async function waitingJobs(redis: Redis, keys: Keys, batch: string): Promise<DealJobData[]> {
  const queue = new Queue<StoredJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
  try {
    // As the worker reads them: the deal unpacked (jobs keep it packed, src/queue/deal-pack.ts).
    return (await queue.getJobs(['wait'], 0, -1))
      .map((j) => {
        // With its batch and dealId from its id, where its hash has none (as the worker reads it).
        const data = jobDataOf(j.id, j.data);
        const deal = dealOf(data);
        return deal ? { ...withoutDeal(data), deal } : data;
      })
      .filter((d) => d.batch === batch);
  } finally {
    await queue.close();
  }
}

/**
 * A nightly tick waits for the news feed past its batch's resent deals as `run` does: with the
 * `--feed-lag-ms` its `work` process was started with, handed to every tick's processor.
 */
import { Queue } from 'bullmq';
import { describe, expect } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { SCHEDULE_QUEUE, type TickData } from '../../../src/schedule/scheduler.js';
import { createTickWorker, type TickProcessorContext } from '../../../src/schedule/tick-worker.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';

const it = harness({ label: 'tick-settings', engine: 'none', redis: { maxRetriesPerRequest: null } });

describe('the schedule worker', () => {
  it("gives each tick the worker's --feed-lag-ms", async ({ redis, keys }) => {
    const seen: TickProcessorContext[] = [];
    const worker = createTickWorker({
      processor: (ctx) => async () => {
        seen.push(ctx);
        return { report: 'none' };
      },
      connection: redis,
      keys,
      db: undefined as never,
      logger: createLogger({ level: 'silent' }),
      feedLagMs: 7_000,
    });
    const queue = new Queue<TickData>(SCHEDULE_QUEUE, { connection: redis, prefix: keys.bullPrefix });
    try {
      await queue.add('tick', { name: 'nightly' } as TickData);
      await waitFor(async () => seen.length === 1, { timeoutMs: 20_000, intervalMs: 20, what: 'the tick' });
      expect(seen[0]!.feedLagMs).toBe(7_000);
    } finally {
      await worker.close();
      await queue.close();
    }
  });
});

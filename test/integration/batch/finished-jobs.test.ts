/**
 * Finished jobs do not outlive their outcomes (TUNABLES.keptJobs): BullMQ keeps only the
 * last few, and everything a batch is read by after its night works from the outcome
 * store: the results file, `status` and the dashboard's batches page (batchStatus),
 * `retry`, and a load of the same file again, which never makes a job of a row that has
 * its outcome.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { runBatch } from '../../../src/pipeline/run-batch.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { batchStatus } from '../../../src/batch/batch-status.js';
import { retryBatch } from '../../../src/batch/retry-batch.js';
import { batchOutcomes } from '../../../src/outcomes/batch-outcomes.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import { dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { outcomeCount } from '../../helpers/outcomes.js';
import { ledgerRows } from '../../helpers/ledger-rows.js';

const SESSION = 'finished-jobs-session';
const BY_SUGGEST = 'NSK-2026-000123';
const WITH_NUMBER = 'MSK-2026-004511';
/** Unavailable while Республика Крым is an EGRON region: a row `retry` may send again. */
const EGRON = 'CRM-2026-000017';
const DEALS = [BY_SUGGEST, WITH_NUMBER, EGRON];
const row = (dealId: string) => ROWS.find((r) => r[0] === dealId)!;

// The client, folder and profile once for the file; a prefix, sandbox and database of each test's own.
const it = harness({
  per: 'file',
  each: ['prefix', 'sandbox', 'db'],
  label: 'finished',
  sandbox: { sessions: [SESSION], egronRegions: ['Республика Крым'] },
  redis: { maxRetriesPerRequest: null },
});

describe('finished jobs kept by count, the outcome store reads the rest', () => {
  let store: UsedDatabase;
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  let sandbox: RunningSandbox;
  let keys: Keys;
  const logger = createLogger({ level: 'silent' });

  const run = async (file: string) =>
    runBatch({
      file,
      profile,
      batch: 'b',
      redis,
      keys,
      db: store.db,
      logger,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      processor: createDealProcessor,
      worker: {
        concurrency: 1,
        attempts: 2,
        backoffMs: 50,
        timeoutMs: 2000,
        feedPollMs: 50,
        // One completed job kept, so that a night of three rows already loses two.
        keptJobs: { completed: 1, failed: 1, failedMaxAgeMs: 60_000 },
      },
      waiting: { pollMs: 20 },
      output: { out: join(dir, 'results.csv'), rejects: join(dir, 'rejects.csv') },
    });

  it.beforeAll(async ({ redis: client, dir: folder, profile: sample }) => {
    redis = client;
    dir = folder;
    profile = await sample.load();
  });
  it.beforeEach(({ keys: made, sandbox: started, db }) => {
    keys = made;
    sandbox = started;
    store = db;
  });

  it('keeps no finished job beyond the count, while results, status, a load again and retry work from the outcomes', async () => {
    const file = join(dir, 'night.csv');
    await writeFile(file, csvText(DEALS.map(row)));
    const first = await run(file);
    expect(first.exitCode).not.toBe(1);
    const queue = new Queue<DealJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    try {
      // Three rows finished, one job left: the last to complete.
      expect(await queue.getJobCounts('completed', 'failed', 'wait', 'delayed')).toEqual({ completed: 1, failed: 0, wait: 0, delayed: 0 });
      const jobsLeft = await Promise.all(DEALS.map((dealId) => queue.getJob(dealJobId('b', dealId))));
      expect(jobsLeft.filter((j) => j !== undefined)).toHaveLength(1);
      // Every row has its outcome; the row index names no finished row any more.
      expect(await outcomeCount(store.db, 'b')).toBe(3);
      expect(await redis.hlen(keys.rows('b'))).toBe(0);

      // The results file and the batches page (status) read the outcomes.
      const results = parse(await readFile(join(dir, 'results.csv')), { columns: true }) as Array<Record<string, string>>;
      expect(results.map((r) => [r.dealId, r.outcome])).toEqual([
        [BY_SUGGEST, 'queued'],
        [WITH_NUMBER, 'queued'],
        [EGRON, 'unavailable'],
      ]);
      const status = await batchStatus(redis, keys, store.db, 'b');
      expect(status).toMatchObject({ done: true, outcomes: { queued: 2, unavailable: 1 }, missing: 0 });

      // The same file loaded again: no job for any row, though two rows' jobs are gone.
      const again = await loadBatch({ file, batch: 'b', profile, redis, keys, db: store.db, logger, rejects: join(dir, 'rejects.csv') });
      expect(again).toMatchObject({ enqueued: 0, alreadyEnqueued: 3 });
      expect(await queue.getJobCounts('completed', 'wait', 'delayed', 'prioritized')).toEqual({
        completed: 1,
        wait: 0,
        delayed: 0,
        prioritized: 0,
      });
      expect(await redis.hlen(keys.rows('b'))).toBe(0);

      // retry sends the unavailable row again from the outcomes: pending meanwhile, with its deal.
      const retried = await retryBatch({ redis, keys, db: store.db, batch: 'b', outcomes: ['unavailable'], logger });
      expect(retried.requeued).toBe(1);
      const pending: Array<[string, string]> = [];
      for await (const r of batchOutcomes(redis, keys, store.db, 'b', 3)) pending.push([r.dealId, r.outcome]);
      expect(pending).toEqual([
        [BY_SUGGEST, 'queued'],
        [WITH_NUMBER, 'queued'],
        [EGRON, 'pending'],
      ]);
      // The index holds the row again, with the batch's expiry.
      expect(await redis.pttl(keys.rows('b'))).toBeGreaterThan(0);
      const second = await run(file);
      expect(second.load).toMatchObject({ enqueued: 0 });
      const final = await batchStatus(redis, keys, store.db, 'b');
      expect(final).toMatchObject({ done: true, outcomes: { queued: 2, unavailable: 1 }, missing: 0 });
      // Never twice: the two queued deals made one docflow each, in all.
      expect(sandbox.stats().docflowsCreated).toBe(2);
      expect((await ledgerRows(store.db)).map((r) => [r.deal_id, r.state, r.n])).toEqual([
        [WITH_NUMBER, 'submitted', 0],
        [BY_SUGGEST, 'submitted', 0],
      ]);
      expect(await queue.getCompletedCount()).toBe(1);
    } finally {
      await queue.close();
    }
  });
});

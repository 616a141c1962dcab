/**
 * A row whose creation answer was lost sleeps until its try's end plus `--feed-lag-ms`
 * unless the news feed answers for it first: the follower that stores its docflow wakes
 * its job, which ends with that docflow and sends nothing again. The lag here is 10
 * minutes and the outcomes are awaited for 20 s: without the wake no row could end.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DelayedError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, afterEach } from 'vitest';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { startFeedFollower, type FeedFollower } from '../../../src/feed/follower.js';
import { createRowWaker } from '../../../src/feed/wake-rows.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import { openQueue } from '../../../src/queue/deal-queue.js';
import { dealJobId } from '../../../src/queue/job-data.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { RunningSandbox, SandboxOptions } from '../../../src/sandbox/index.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';
import { storedOutcomes } from '../../helpers/outcomes.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { ledgerRow } from '../../helpers/ledger-rows.js';
import { requestIdOf } from '../../../src/ledger/entry.js';

const SESSION = 'wake-session';
const DEALS = ['MSK-2026-004511', 'SPB-2026-010078', 'NSK-2026-000123'];
/** The feed lag the rows would otherwise sleep out: far longer than any wait below. */
const FEED_LAG_MS = 10 * 60 * 1000;
const quiet = createLogger({ level: 'silent' });
const POLL = { timeoutMs: 20_000, intervalMs: 25 };

// The client, folder and profile once for the file; a prefix and database of each test's own.
const it = harness({ per: 'file', each: ['prefix', 'db'], label: 'wake', redis: { maxRetriesPerRequest: null } });

describe('a row whose lost answer the news feed finds', () => {
  let store: UsedDatabase;
  let openSandbox: (options: SandboxOptions) => Promise<RunningSandbox>;
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  let sandbox: RunningSandbox;
  let client: RealtyClient;
  let prefix: string;
  let keys: Keys;
  let worker: DealWorker | undefined;
  let follower: FeedFollower | undefined;
  /** What a test started, closed after it (the last first). */
  const closers: Array<() => Promise<void>> = [];

  const jobOf = async (dealId: string) => {
    const queue = openQueue(redis, keys);
    try {
      const job = await queue.getJob(dealJobId('night', dealId));
      return job && { state: await job.getState(), waits: job.data.waits ?? 0, key: `${job.queueQualifiedName}:${job.id}` };
    } finally {
      await queue.close();
    }
  };
  const entryOf = (dealId: string) => ledgerRow(store.db, profile.organization.inn, dealId);
  const outcomes = () => storedOutcomes(store.db, 'night');

  /**
   * Every deal's creation answer is lost (its docflow made); the worker does not follow the
   * feed. Resolves once every row sleeps in reconcile: its try uncertain, its job delayed
   * after a claim that said to wait for the feed. Returns when each would wake by itself.
   */
  const lostAndAsleep = async (): Promise<number[]> => {
    sandbox = await openSandbox({ sessions: [SESSION], faultLost: 1, newsLagMs: 50 });
    client = createRealtyClient({ baseUrl: sandbox.url, sessionId: SESSION, timeoutMs: 5000 });
    closers.push(() => client.close());
    const file = join(dir, `${prefix}.csv`);
    await writeFile(file, csvText(DEALS.map((d) => ROWS.find((r) => r[0] === d)!)));
    await loadBatch({
      file,
      batch: 'night',
      profile,
      redis,
      keys,
      db: store.db,
      logger: quiet,
      rejects: join(dir, `${prefix}.rejects.csv`),
    });
    worker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      logger: quiet,
      concurrency: 4,
      attempts: 3,
      backoffMs: 50,
      timeoutMs: 2000,
      feedLagMs: FEED_LAG_MS,
      track: false,
    });
    await waitFor(
      async () => {
        const jobs = await Promise.all(DEALS.map(jobOf));
        return jobs.every((j) => j?.state === 'delayed' && j.waits >= 1) && sandbox.stats().docflowsCreated === DEALS.length;
      },
      { ...POLL, what: 'every row asleep in reconcile' },
    );
    const entries = await Promise.all(DEALS.map(entryOf));
    for (const e of entries) expect(e).toMatchObject({ state: 'sending', lag_ms: FEED_LAG_MS });
    return entries.map((e) => Number(e!.end_at) + Number(e!.lag_ms));
  };

  it.beforeAll(async ({ redis: client, dir: folder, profile: sample }) => {
    redis = client;
    dir = folder;
    profile = await sample.load();
  });
  it.beforeEach(({ prefix: made, keys: madeKeys, db, openSandbox: open }) => {
    prefix = made;
    keys = madeKeys;
    store = db;
    openSandbox = open;
  });
  // Before the harness closes the test's sandbox and deletes its prefix.
  afterEach(async () => {
    await follower?.close();
    follower = undefined;
    await worker?.close(2000);
    worker = undefined;
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('ends with its docflow as soon as the follower stores it, long before the feed lag, and sends nothing again', async () => {
    const dues = await lostAndAsleep();
    follower = startFeedFollower({ redis, keys, db: store.db, client, logger: quiet, pollMs: 50 });
    // Twenty seconds, for rows that would otherwise sleep ten minutes.
    const ended = await waitFor(
      async () => {
        const all = await outcomes();
        return all.length === DEALS.length && all;
      },
      { ...POLL, what: 'every row ended' },
    );
    // Their waits had not run out: the database's clock is still before any try's end plus its lag.
    expect(await store.db.now()).toBeLessThan(Math.min(...dues));
    const inn = profile.organization.inn;
    for (const dealId of DEALS) {
      const [docflow, ...more] = sandbox.docflows().filter((d) => d.requestId === requestIdOf(inn, dealId));
      expect(more).toEqual([]);
      expect(ended.find((o) => o.dealId === dealId)).toMatchObject({ outcome: 'queued', docflowId: docflow!.docflowId });
      expect(ended.find((o) => o.dealId === dealId)!.errorMessage).toContain('news feed');
      expect(await entryOf(dealId)).toMatchObject({ state: 'submitted', docflow_id: docflow!.docflowId, via: 'feed' });
    }
    // One creation call a deal, each answer lost: none was sent again.
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: DEALS.length, requestIdsWithSeveralDocflows: 0 });
    expect(sandbox.stats().docflowCalls).toEqual({ lost: DEALS.length });
  });

  it('lets a job woken while its docflow is not found yet sleep again, sending nothing', async () => {
    await lostAndAsleep();
    const [first] = DEALS;
    const before = await jobOf(first!);
    const waker = createRowWaker(redis, keys, quiet);
    try {
      waker.wake([before!.key, 'someone-else:deals:x']);
      // It ran, its claim still said to wait for the feed, and it went back to sleep.
      await waitFor(
        async () => {
          const job = await jobOf(first!);
          return job?.state === 'delayed' && job.waits > before!.waits;
        },
        { ...POLL, what: 'the woken job asleep again' },
      );
    } finally {
      await waker.close();
    }
    expect(await outcomes()).toEqual([]);
    expect(await entryOf(first!)).toMatchObject({ state: 'sending' });
    expect(sandbox.stats().docflowCalls).toEqual({ lost: DEALS.length });
  });

  it('wakes a job that was still running when its docflow was stored, once it has gone to sleep', async () => {
    // A job whose claim read the ledger before the follower's page was stored: it is active
    // at the wake, then sleeps for the feed lag. Its second run is the wake's.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let runs = 0;
    const sleeper = new Worker(
      keys.queueName,
      async (job, token) => {
        runs++;
        if (runs > 1) return 'woken';
        await gate;
        await job.moveToDelayed(Date.now() + FEED_LAG_MS, token);
        throw new DelayedError();
      },
      { connection: redis, prefix: keys.bullPrefix },
    );
    const queue = openQueue(redis, keys);
    const waker = createRowWaker(redis, keys, quiet);
    try {
      const job = await queue.add('deal', { batch: 'night', row: 1, dealId: 'D-1' }, { jobId: 'night.D-1' });
      await waitFor(async () => (await job.getState()) === 'active', { ...POLL, what: 'the job running' });
      waker.wake([`${job.queueQualifiedName}:${job.id}`]);
      // The wake finds it running (it may not promote it); then it goes to sleep for the lag.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await job.getState()).toBe('active');
      release();
      await waitFor(async () => (await job.getState()) === 'completed', { ...POLL, what: 'the job woken and done' });
      expect(runs).toBe(2);
    } finally {
      release();
      await waker.close();
      await sleeper.close();
      await queue.close();
    }
  });
});

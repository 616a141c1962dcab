/**
 * "Never twice, never lost" without the gateway's help: the sandbox runs with its default
 * `--request-ids ignore` (every creation call makes a docflow), and each test replays one
 * way a reviewer got a deal sent twice or a row lost, and shows it no longer happens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, afterEach } from 'vitest';
import { runBatch } from '../../../src/pipeline/run-batch.js';
import type { WorkerSettingsInput } from '../../../src/worker/worker-settings.js';
import { retryBatch } from '../../../src/batch/retry-batch.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { openQueue } from '../../../src/queue/deal-queue.js';
import { createLedger } from '../../../src/ledger/ledger.js';
import { ensureFeed } from '../../../src/feed/feed-store.js';
import { createRealtyClient } from '../../../src/realty/client.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import { dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import type { OutcomeRecord } from '../../../src/domain/outcome.js';
import { batchStatus } from '../../../src/batch/batch-status.js';
import { hintFor } from '../../../src/results/hints.js';
import { UsageError } from '../../../src/errors.js';
import type { RunningSandbox, SandboxOptions } from '../../../src/sandbox/index.js';
import { runCli } from '../../helpers/cli.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { freePort } from '../../helpers/ports.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { waitForPing } from '../../helpers/private-redis.js';
import { outcomeCount, storedOutcome } from '../../helpers/outcomes.js';
import { batchRow, expireBatch, setBatchState } from '../../helpers/batch-rows.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { feedRow, ledgerRow, ledgerRows } from '../../helpers/ledger-rows.js';
import { requestIdOf } from '../../../src/ledger/entry.js';

const SESSION = 'twice-session';
const row = (dealId: string) => ROWS.find((r) => r[0] === dealId)!;
/** Rows of the samples with their cadastral numbers (no suggest), in Москва and Санкт-Петербург. */
const MSK = 'MSK-2026-004511';
const SPB = 'SPB-2026-010078';
const BY_SUGGEST = 'NSK-2026-000123';
const DAY = 24 * 3600 * 1000;
const quiet = createLogger({ level: 'silent' });

/** The worker settings of every test: short waits, a feed lag a little above the sandbox's. */
const FAST = { concurrency: 4, attempts: 3, backoffMs: 50, timeoutMs: 2000, feedLagMs: 300, feedPollMs: 50, lockMs: 1000 };

// The client, folder and profile once for the file; a prefix and database of each test's own, and
// the sandboxes each test starts (closed after it).
const it = harness({ per: 'file', each: ['prefix', 'db'], label: 'twice', redis: { maxRetriesPerRequest: null } });

describe('never twice, never lost, with a gateway that does not deduplicate', () => {
  let store: UsedDatabase;
  let openSandbox: (options: SandboxOptions) => Promise<RunningSandbox>;
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  let sandbox: RunningSandbox;
  let prefix: string;
  let keys: Keys;
  const workers: DealWorker[] = [];

  const start = async (options: SandboxOptions = {}) => {
    sandbox = await openSandbox({ sessions: [SESSION], newsLagMs: 100, ...options });
  };
  const fileOf = async (name: string, dealIds: string[]) => {
    const file = join(dir, `${name}.csv`);
    await writeFile(file, csvText(dealIds.map(row)));
    return file;
  };
  const run = async (batch: string, dealIds: string[], extra: WorkerSettingsInput & { stallMs?: number } = {}) => {
    const { stallMs, ...worker } = extra;
    const out = join(dir, `${batch}.results.csv`);
    const result = await runBatch({
      file: await fileOf(batch, dealIds),
      profile,
      batch,
      redis,
      keys,
      db: store.db,
      logger: quiet,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      processor: createDealProcessor,
      worker: { ...FAST, ...worker },
      waiting: { pollMs: 20, stallMs },
      output: { out, rejects: join(dir, `${batch}.rejects.csv`) },
    });
    return { result, rows: parse(readFileSync(out), { columns: true }) as Array<Record<string, string>> };
  };
  const worker = () => {
    const w = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      logger: quiet,
      ...FAST,
    });
    workers.push(w);
    return w;
  };
  const outcomeOf = async (batch: string, n: number): Promise<OutcomeRecord | undefined> => {
    return storedOutcome(store.db, batch, n);
  };
  const POLL = { timeoutMs: 20_000, intervalMs: 25 };
  /**
   * The fleet's feed is started (its cursor taken), then the gateway's feed goes dark. Its last
   * complete read is then, by a follower that polls every minute (`track --poll-ms 60000`): a
   * claim may go for two of its periods (src/ledger/claim.ts), the whole test, dark feed or not.
   */
  const darkFeed = async () => {
    const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: SESSION, timeoutMs: 2000 });
    await ensureFeed(store.db, client);
    await client.close();
    await store.db.kysely.updateTable('feed').set({ poll_ms: 60_000 }).where('id', '=', 1).execute();
    sandbox.configure({ newsOutage: true });
  };
  /** Removes a row's job from outside the tool, as a script or an old dashboard would. */
  const removeJob = async (batch: string, dealId: string) => {
    const queue = openQueue(redis, keys);
    try {
      expect(await queue.remove(dealJobId(batch, dealId))).toBe(1);
    } finally {
      await queue.close();
    }
  };
  const docflowsOf = (dealId: string) => sandbox.docflows().filter((d) => d.requestId === requestIdOf(profile.organization.inn, dealId));

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
  // Before the harness closes the test's sandboxes and deletes its prefix.
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close(2000);
  });

  it('1. refuses to load a batch again with another --resubmit setting, so no try of it changes its requestId', async () => {
    await start();
    const file = await fileOf('flip', [MSK]);
    await loadBatch({ file, batch: 'flip', profile, redis, keys, db: store.db, logger: quiet, rejects: join(dir, 'flip.rejects.csv') });
    const again = loadBatch({
      file,
      batch: 'flip',
      profile,
      redis,
      keys,
      db: store.db,
      logger: quiet,
      resubmit: true,
      rejects: join(dir, 'flip.rejects.csv'),
    });
    await expect(again).rejects.toThrow(UsageError);
    await expect(again).rejects.toThrow(/was loaded without --resubmit/);
    expect((await batchRow(store.db, 'flip'))?.resubmit).toBe(0);
    // The command line says it in one sentence, exit 2.
    const cli = await runCli(
      ['load', file, '--profile', 'samples/bank-profile.json', '--batch', 'flip', '--resubmit', '--rejects', join(dir, 'x.csv')],
      { REDIS_URL, REALTY_PREFIX: prefix, DATABASE_URL: store.url },
    );
    expect(cli.code).toBe(2);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('2. gives a row whose batch expired and was loaded again its own docflow, without a call', async () => {
    await start();
    const first = await run('night', [MSK, SPB]);
    expect(first.rows.map((r) => r.outcome)).toEqual(['queued', 'queued']);
    const calls = sandbox.stats().docflowCalls['200'];
    // The batch is gone (expired): every key of the prefix, its row and outcomes in the database; the ledger is not.
    await redis.del(...(await redis.keys(`{${prefix}}:*`)));
    await expireBatch(store.db, 'night');
    expect((await ledgerRows(store.db)).map((r) => [r.deal_id, r.state])).toEqual([
      [MSK, 'submitted'],
      [SPB, 'submitted'],
    ]);
    const again = await run('night', [MSK, SPB]);
    expect(again.result.load).toMatchObject({ enqueued: 0, alreadySubmitted: 2 });
    expect(again.rows.map((r) => [r.outcome, r.docflowId])).toEqual(first.rows.map((r) => ['queued', r.docflowId]));
    expect(sandbox.stats().docflowCalls['200']).toBe(calls);
    expect(sandbox.stats().requestIdsWithSeveralDocflows).toBe(0);
  });

  it('3. sends a deal that two batches hold at the same time once: the other row gets its docflow as already_submitted', async () => {
    // Slow answers, so that both rows are between their lookup and their docflow together.
    await start({ latencyMs: 300 });
    for (const batch of ['left', 'right'])
      await loadBatch({
        file: await fileOf(batch, [MSK, SPB]),
        batch,
        profile,
        redis,
        keys,
        db: store.db,
        logger: quiet,
        rejects: join(dir, `${batch}.rejects.csv`),
      });
    worker();
    worker();
    await waitFor(async () => (await outcomeCount(store.db, 'left')) + (await outcomeCount(store.db, 'right')) === 4, {
      ...POLL,
      what: 'four outcomes',
    });
    for (const [n, dealId] of [MSK, SPB].entries()) {
      const pair = [await outcomeOf('left', n + 1), await outcomeOf('right', n + 1)];
      expect(pair.map((o) => o!.outcome).sort()).toEqual(['already_submitted', 'queued']);
      expect(new Set(pair.map((o) => o!.docflowId)).size).toBe(1);
      expect(docflowsOf(dealId)).toHaveLength(1);
    }
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: 2, requestIdsWithSeveralDocflows: 0 });
  });

  describe('4. a try whose answer was lost is found in the news feed, whatever the next try would have answered', () => {
    const nextAnswers: Array<[string, Partial<Parameters<RunningSandbox['configure']>[0]>]> = [
      ['a 501', { egronRegions: ['Москва'] }],
      ['a 403', { restrictedSessions: [SESSION] }],
      ['a 5xx', { fault5xx: 1 }],
      ['a lost answer again', { faultLost: 1 }],
    ];
    for (const [what, next] of nextAnswers) {
      it(`ends queued with the first docflow when the next try would get ${what}`, async () => {
        await start({ faultLost: 1 });
        const running = run('lost', [MSK]);
        await waitFor(async () => sandbox.stats().docflowsCreated === 1, { ...POLL, what: 'the first docflow' });
        sandbox.configure({ faultLost: 0, ...next });
        const { rows } = await running;
        expect(rows[0]).toMatchObject({ outcome: 'queued', docflowId: sandbox.docflows()[0]!.docflowId, httpStatus: '200' });
        expect(rows[0]!.errorMessage).toContain('news feed');
        expect(sandbox.stats()).toMatchObject({ docflowsCreated: 1, requestIdsWithSeveralDocflows: 0 });
      });
    }

    it('ends queued with the first docflow when every try times out after the gateway made it', async () => {
      // The sandbox makes the docflow at once and answers after 500 ms; the client gives up at 150.
      await start({ latencyMs: 500 });
      const { rows } = await run('slow', [MSK], { timeoutMs: 150 });
      expect(rows[0]).toMatchObject({ outcome: 'queued', docflowId: sandbox.docflows()[0]!.docflowId });
      expect(sandbox.stats().docflowsCreated).toBe(1);
    });

    it('ends ERR_UNCERTAIN, never sending again, while the feed cannot tell; retry then finds the docflow', async () => {
      await start({ faultLost: 1 });
      await darkFeed();
      const { rows } = await run('dark', [MSK], { reconcileTimeoutMs: 1000 });
      expect(rows[0]).toMatchObject({ outcome: 'failed', errorCode: 'ERR_UNCERTAIN' });
      expect(rows[0]!.errorMessage).toMatch(/check the gateway before sending it again/);
      expect(hintFor((await outcomeOf('dark', 1))!, 'dark')).toMatch(/do not submit it by hand before checking the gateway/);
      expect(sandbox.stats().docflowsCreated).toBe(1);
      // The feed is back: retry looks before sending, and a worker (its follower) finds the docflow.
      sandbox.configure({ newsOutage: false, faultLost: 0 });
      const summary = await retryBatch({ redis, keys, db: store.db, batch: 'dark', outcomes: ['failed'], logger: quiet });
      expect(summary.requeued + summary.reconciled).toBe(1);
      worker();
      await waitFor(async () => (await outcomeOf('dark', 1))?.outcome === 'queued', { ...POLL, what: 'the row queued' });
      expect(await outcomeOf('dark', 1)).toMatchObject({ docflowId: sandbox.docflows()[0]!.docflowId });
      expect(sandbox.stats().docflowsCreated).toBe(1);
    });
  });

  it('lets an operator answer for an ERR_UNCERTAIN row once the gateway was checked: the row gets the docflow, or retry may send it', async () => {
    await start({ faultLost: 1 });
    await darkFeed();
    // MSK's answer is lost (its docflow made); SPB's call gets a 503 (nothing made, but who can tell).
    const lost = await run('lost', [MSK], { reconcileTimeoutMs: 1000 });
    sandbox.configure({ faultLost: 0, fault5xx: 1 });
    const down = await run('down', [SPB], { reconcileTimeoutMs: 1000, attempts: 1 });
    expect([lost.rows[0]!.errorCode, down.rows[0]!.errorCode]).toEqual(['ERR_UNCERTAIN', 'ERR_UNCERTAIN']);
    // The gateway answers again (the operator checks it).
    sandbox.configure({ fault5xx: 0 });
    const env = { REDIS_URL, REALTY_PREFIX: prefix, DATABASE_URL: store.url, REALTY_API_URL: sandbox.url, REALTY_SESSION_ID: SESSION };
    const shown = await runCli(['ledger', MSK, '--profile', 'samples/bank-profile.json'], env);
    expect(shown.stdout).toMatch(/sending, requestId \d+:reg:0:MSK-2026-004511, row 1 of batch lost/);
    expect(shown.stdout).toContain('ended without an answer');
    // The operator finds MSK's docflow at the gateway, and none for SPB.
    const [made] = sandbox.docflows();
    expect(sandbox.docflows()).toHaveLength(1);
    // A guess is checked at the gateway: a docflow it does not have, and MSK's docflow named for SPB, are refused.
    const unknown = await runCli(
      ['ledger', MSK, '--profile', 'samples/bank-profile.json', '--resolve', '00000000-0000-4000-8000-000000000000'],
      env,
    );
    expect([unknown.code, unknown.stderr]).toEqual([
      2,
      'realty-batch: The gateway has no docflow 00000000-0000-4000-8000-000000000000; nothing was changed (is the id copied whole?).\n',
    ]);
    const another = await runCli(['ledger', SPB, '--profile', 'samples/bank-profile.json', '--resolve', made!.docflowId], env);
    expect(another.code).toBe(2);
    expect(another.stderr).toMatch(
      new RegExp(
        `^realty-batch: Docflow ${made!.docflowId} carries requestId \\d+:reg:0:${MSK}, not \\d+:reg:0:${SPB} of deal ${SPB}'s try waiting for an answer; nothing was changed\\.\\n$`,
      ),
    );
    // The gateway's state is kept: the operator's --state, when another, is said and set aside.
    const resolved = await runCli(
      ['ledger', MSK, '--profile', 'samples/bank-profile.json', '--resolve', made!.docflowId, '--state', 'suspended'],
      env,
    );
    expect(resolved.code).toBe(0);
    expect(resolved.stderr).toMatch(
      new RegExp(`the gateway has docflow ${made!.docflowId} (queued|sent|completed): kept as queued, not suspended`),
    );
    expect((await runCli(['ledger', SPB, '--profile', 'samples/bank-profile.json', '--resolve-none'], env)).code).toBe(0);
    expect(await outcomeOf('lost', 1)).toMatchObject({ outcome: 'queued', docflowId: made!.docflowId });
    const again = await runCli(['ledger', MSK, '--profile', 'samples/bank-profile.json', '--resolve-none'], env);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('has no try waiting for an answer');
    // SPB may be sent again: retry sends it (the feed is still dark, its last complete read within two of its follower's periods).
    await retryBatch({ redis, keys, db: store.db, batch: 'down', outcomes: ['failed'], logger: quiet });
    worker();
    await waitFor(async () => (await outcomeOf('down', 1))?.outcome === 'queued', { ...POLL, what: 'the row queued' });
    expect(sandbox.docflows()).toHaveLength(2);
    expect(sandbox.stats().requestIdsWithSeveralDocflows).toBe(0);
    // Seven commands, each a process of its own that opens the database: more than the default 30 s on a busy machine.
  }, 120_000);

  it('5. keeps a batch (its outcomes) and its profile as long as a later load says, even when a worker that started before it writes', async () => {
    await start({ egronRegions: ['Москва'] });
    const w = worker();
    const file = await fileOf('long', [MSK, SPB]);
    await loadBatch({
      file,
      batch: 'long',
      profile,
      redis,
      keys,
      db: store.db,
      logger: quiet,
      retentionMs: DAY,
      rejects: join(dir, 'long.rejects.csv'),
    });
    await waitFor(async () => (await outcomeCount(store.db, 'long')) === 2, { ...POLL, what: 'both outcomes' });
    expect(Number((await batchRow(store.db, 'long'))?.expires_at)).toBeLessThanOrEqual(Date.now() + DAY);
    expect(await redis.pttl(keys.batch('long'))).toBeLessThanOrEqual(DAY);
    // Loaded again with a longer retention while the same worker runs; then a row finishes again.
    await loadBatch({
      file,
      batch: 'long',
      profile,
      redis,
      keys,
      db: store.db,
      logger: quiet,
      retentionMs: 3 * DAY,
      rejects: join(dir, 'long.rejects.csv'),
    });
    sandbox.configure({ egronRegions: [] });
    await retryBatch({ redis, keys, db: store.db, batch: 'long', outcomes: ['unavailable'], logger: quiet });
    await waitFor(async () => (await outcomeOf('long', 1))?.outcome === 'queued', { ...POLL, what: 'the retried row' });
    expect(w.worker.isRunning()).toBe(true);
    // The batch's row (with it, its outcomes) and its profile in Redis go no sooner than the later load said.
    expect(Number((await batchRow(store.db, 'long'))?.expires_at)).toBeGreaterThan(Date.now() + 3 * DAY - 60_000);
    expect(await redis.hexists(keys.batch('long'), 'profile')).toBe(1);
    expect(await redis.pttl(keys.batch('long'))).toBeGreaterThan(3 * DAY - 60_000);
    // The row index names rows without an outcome only: with every row finished, it is gone.
    expect(await redis.exists(keys.rows('long'))).toBe(0);
  });

  describe('7. no row without a job or an outcome', () => {
    it('names the rows whose jobs were removed, and retry --missing makes them again from the input', async () => {
      await start();
      const file = await fileOf('holes', [MSK, SPB, BY_SUGGEST]);
      await loadBatch({ file, batch: 'holes', profile, redis, keys, db: store.db, logger: quiet, rejects: join(dir, 'holes.rejects.csv') });
      await removeJob('holes', SPB);
      const status = await batchStatus(redis, keys, store.db, 'holes');
      expect(status).toMatchObject({ missing: 1, missingRows: [2], done: false });
      const cli = await runCli(['status', 'holes'], { REDIS_URL, REALTY_PREFIX: prefix, DATABASE_URL: store.url });
      expect(cli.stdout).toContain('retry holes --missing');
      // A job BullMQ failed (its worker died before writing the row's outcome) is no better.
      const failed = dealJobId('holes', BY_SUGGEST);
      const bull = `${keys.bullPrefix}:${keys.queueName}`;
      await redis
        .multi()
        .lrem(`${bull}:wait`, 0, failed)
        .zadd(`${bull}:failed`, Date.now(), failed)
        .hset(`${bull}:${failed}`, 'finishedOn', Date.now(), 'failedReason', 'job stalled more than allowable limit')
        .exec();
      expect(await batchStatus(redis, keys, store.db, 'holes')).toMatchObject({ missing: 2, missingRows: [2, 3] });
      const summary = await retryBatch({ redis, keys, db: store.db, batch: 'holes', outcomes: [], missing: true, logger: quiet });
      expect(summary).toMatchObject({ missing: 2, requeued: 2 });
      expect((await batchStatus(redis, keys, store.db, 'holes')).missing).toBe(0);
      worker();
      await waitFor(async () => (await outcomeCount(store.db, 'holes')) === 3, { ...POLL, what: 'every outcome' });
      expect([(await outcomeOf('holes', 2))!.outcome, (await outcomeOf('holes', 3))!.outcome]).toEqual(['queued', 'queued']);
    });

    it('retry --outcome pending leaves rows whose job waits alone, gives a lost row its job back, and sends no deal twice', async () => {
      await start();
      const file = await fileOf('waits', [MSK, SPB, BY_SUGGEST]);
      await loadBatch({ file, batch: 'waits', profile, redis, keys, db: store.db, logger: quiet, rejects: join(dir, 'waits.rejects.csv') });
      await removeJob('waits', SPB);
      // Through the command line, as an operator types it.
      const cli = await runCli(['retry', 'waits', '--outcome', 'pending'], {
        REDIS_URL,
        REALTY_PREFIX: prefix,
        DATABASE_URL: store.url,
        LOG_LEVEL: 'silent',
      });
      expect(cli.stderr).not.toMatch(/only rows that need attention/);
      expect(cli.stdout).toContain('batch waits: 1 row sent around again (pending); 0 found in the news feed; 2 already on their way');
      // Again at once: the lost row's job now waits too.
      expect(await retryBatch({ redis, keys, db: store.db, batch: 'waits', outcomes: ['pending'], logger: quiet })).toMatchObject({
        selected: 3,
        requeued: 0,
        alreadyGoing: 3,
      });
      worker();
      await waitFor(async () => (await outcomeCount(store.db, 'waits')) === 3, { ...POLL, what: 'every outcome' });
      for (const n of [1, 2, 3]) expect((await outcomeOf('waits', n))!.outcome).toBe('queued');
      for (const dealId of [MSK, SPB, BY_SUGGEST]) expect(docflowsOf(dealId)).toHaveLength(1);
      // Nothing is pending any more: nothing to send.
      expect(await retryBatch({ redis, keys, db: store.db, batch: 'waits', outcomes: ['pending'], logger: quiet })).toMatchObject({
        selected: 0,
        requeued: 0,
      });
      for (const dealId of [MSK, SPB, BY_SUGGEST]) expect(docflowsOf(dealId)).toHaveLength(1);
    });

    it("stops run with exit 1 and the rows named, instead of waiting for ever, when a row's job is removed", async () => {
      await start({ latencyMs: 400 });
      const running = run('gone', [MSK, SPB, BY_SUGGEST], { concurrency: 1, stallMs: 500 });
      // The third row waits behind the others: its job is removed from outside.
      await waitFor(async () => (await redis.exists(`${keys.bullPrefix}:${keys.queueName}:${dealJobId('gone', BY_SUGGEST)}`)) === 1, {
        ...POLL,
        what: 'the jobs',
      });
      await removeJob('gone', BY_SUGGEST);
      const { result, rows } = await running;
      expect(result).toMatchObject({ stoppedBecause: 'missing', exitCode: 1, missing: { count: 1, rows: [3] } });
      expect(rows.map((r) => r.outcome)).toEqual(['queued', 'queued', 'pending']);
    });

    it("records a job BullMQ failed by itself, with its batch's expiry, as ERR_UNCERTAIN when its call may have made a docflow", async () => {
      await start();
      const file = await fileOf('net', [MSK]);
      await loadBatch({ file, batch: 'net', profile, redis, keys, db: store.db, logger: quiet, rejects: join(dir, 'net.rejects.csv') });
      // Held back (as while loading), so that no processor runs it: the test plays the worker that died.
      await setBatchState(store.db, 'net', 'loading');
      const w = worker();
      await waitFor(async () => (await w.queue.getDelayedCount()) === 1, { ...POLL, what: 'the job held back' });
      await waitFor(async () => (await feedRow(store.db)) !== undefined, { ...POLL, what: 'the feed' });
      // Its try was written ahead, then its worker died mid-call, again and again: BullMQ fails the job.
      const ledger = createLedger(redis, keys, store.db, { timeoutMs: 2000, feedLagMs: 300 });
      const job = (await Job.fromId<DealJobData>(w.queue, dealJobId('net', MSK)))!;
      const claim = await ledger.claim({
        bank: profile.organization.inn,
        dealId: MSK,
        batch: 'net',
        row: 1,
        job: `${keys.bullPrefix}:${keys.queueName}:${job.id}`,
        resubmit: false,
        mode: 'send',
        nonce: 'the-dead-run',
      });
      expect(claim.kind).toBe('send');
      await setBatchState(store.db, 'net', 'loaded');
      job.finishedOn = Date.now();
      w.worker.emit('failed', job, new Error('job stalled more than allowable limit'), 'active');
      // close() waits for the net's write.
      await w.close(3000);
      workers.splice(workers.indexOf(w), 1);
      const outcome = (await outcomeOf('net', 1))!;
      expect(outcome).toMatchObject({ outcome: 'failed', errorCode: 'ERR_UNCERTAIN' });
      expect(outcome.errorMessage).toContain('looks for it in the news feed');
      // Kept as long as its batch: 30 days from the load.
      expect(Number((await batchRow(store.db, 'net'))?.expires_at)).toBeGreaterThan(Date.now() + 29 * DAY);
      expect(JSON.parse((await redis.hget(`${keys.bullPrefix}:${keys.queueName}:${job.id}`, 'data'))!)).not.toHaveProperty('deal');
      // The claim stays: the deal may be at the gateway.
      expect(await ledgerRow(store.db, profile.organization.inn, MSK)).toMatchObject({
        state: 'sending',
        nonce: 'the-dead-run',
        batch: 'net',
        row: 1,
      });
    });
  });

  describe("Redis' eviction policy", () => {
    let child: ChildProcess | undefined;
    afterEach(() => {
      child?.kill('SIGKILL');
    });

    it('refuses load, run and work on a Redis that evicts keys when full, naming the setting', async () => {
      const port = await freePort();
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'allkeys-lru'],
        { stdio: 'ignore' },
      );
      await waitForPing(port);
      await start();
      const env = {
        REDIS_URL: `redis://127.0.0.1:${port}`,
        DATABASE_URL: store.url,
        REALTY_API_URL: sandbox.url,
        REALTY_SESSION_ID: SESSION,
      };
      const file = await fileOf('lru', [MSK]);
      for (const args of [
        ['load', file, '--profile', 'samples/bank-profile.json', '--rejects', join(dir, 'lru.r.csv')],
        ['run', file, '--profile', 'samples/bank-profile.json', '--rejects', join(dir, 'lru.r.csv'), '--out', join(dir, 'lru.out.csv')],
        ['work'],
      ]) {
        const result = await runCli(args, env);
        expect(result.code, `${args[0]}: ${result.stderr}`).toBe(1);
        expect(result.stderr).toMatch(/^realty-batch: Redis at .+ evicts keys when it is full \(maxmemory-policy allkeys-lru\)/);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
      }
      // Nothing was loaded.
      const probe = new Redis(port);
      expect(await probe.dbsize()).toBe(0);
      probe.disconnect();
      expect(await ledgerRows(store.db)).toEqual([]);
    });
  });
});

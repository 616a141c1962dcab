import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { runBatch, type LoadSettings } from '../../../src/pipeline/run-batch.js';
import type { WorkerSettingsInput } from '../../../src/worker/worker-settings.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { createDealWorker } from '../../../src/worker/create-worker.js';
import { TUNABLES } from '../../../src/config.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import { createKeys } from '../../../src/redis/keys.js';
import { dealJobId, type DealJobData } from '../../../src/queue/job-data.js';
import type { OutcomeRecord } from '../../../src/domain/outcome.js';
import type { RegistryObject, RunningSandbox, SandboxOptions } from '../../../src/sandbox/index.js';
import { createRequestLimiter } from '../../../src/worker/rate-limit.js';
import { startFeedFollower } from '../../../src/feed/follower.js';
import { createRealtyClient } from '../../../src/realty/client.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { monitorRedis } from '../../helpers/monitor.js';
import { waitFor } from '../../helpers/wait-for.js';
import { outcomeCount, storedOutcome, storedOutcomes } from '../../helpers/outcomes.js';
import { batchRow, setBatchState } from '../../helpers/batch-rows.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { docflowRow, feedRow, ledgerRow, putLedgerRow } from '../../helpers/ledger-rows.js';

const SESSION = 'worker-test-session';
const row = (dealId: string) => ROWS.find((r) => r[0] === dealId)!;
/** Row 1 of the samples: found through suggest (Новосибирская область). */
const BY_SUGGEST = 'NSK-2026-000123';
/** Row 2 of the samples: has its cadastral number (Москва). */
const WITH_NUMBER = 'MSK-2026-004511';
const REGISTRY = JSON.parse(readFileSync(join(ROOT, 'samples/registry.json'), 'utf8')) as RegistryObject[];

// The file's Redis client (as BullMQ's workers want it) and folder; a prefix and a database of each test's own, and its sandboxes.
const it = harness({ per: 'file', each: ['prefix', 'db'], label: 'worker', redis: { maxRetriesPerRequest: null } });
// The file's prefix and Redis client; a database, folder and sandbox of each test's own.
const rated = harness({
  per: 'file',
  each: ['db', 'dir', 'sandbox'],
  label: 'rate',
  redis: { maxRetriesPerRequest: null },
  sandbox: { sessions: [SESSION] },
});

describe('the worker against every answer of the gateway', () => {
  let store: UsedDatabase;
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  let sandbox: RunningSandbox;
  let prefix: string;
  /** Another prefix of the test's own (one test takes fresh ones part-way), deleted after it. */
  let freshPrefix: () => string;
  let openSandbox: (options: SandboxOptions) => Promise<RunningSandbox>;
  let logs: string;

  /** A sandbox of the test's own, closed after it. */
  const start = async (options: SandboxOptions = {}) => {
    sandbox = await openSandbox({ sessions: [SESSION], ...options });
  };
  /** The registry refused the deal's docflow (a sandbox started with faultRegistry 1): the feed, followed here, records it in the ledger. */
  const refusedByRegistry = async (dealId: string): Promise<void> => {
    const keys = createKeys(prefix);
    const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: SESSION, timeoutMs: 5000 });
    const follower = startFeedFollower({
      redis,
      keys,
      db: store.db,
      client,
      logger: createLogger({ level: 'silent' }),
      pollMs: 50,
    });
    try {
      const state = async () => {
        const docflowId = (await ledgerRow(store.db, profile.organization.inn, dealId))?.docflow_id;
        return docflowId ? (await docflowRow(store.db, docflowId))?.st : undefined;
      };
      await waitFor(async () => (await state()) === 'error', {
        timeoutMs: 20_000,
        intervalMs: 50,
        what: `the registry's refusal of ${dealId}`,
      });
    } finally {
      await follower.close();
      await client.close();
    }
  };
  const run = async (dealIds: string[], extra: { batch?: string } & LoadSettings & WorkerSettingsInput = {}) => {
    const { batch = 'b', resubmit, ...worker } = extra;
    const file = join(dir, `${batch}.csv`);
    await writeFile(file, csvText(dealIds.map(row)));
    const out = join(dir, `${batch}.results.csv`);
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => (logs += d.toString()));
    const result = await runBatch({
      file,
      profile,
      batch,
      redis,
      keys: createKeys(prefix),
      db: store.db,
      logger: createLogger({ level: 'debug', destination: stream }),
      apiUrl: sandbox.url,
      sessionId: SESSION,
      processor: createDealProcessor,
      load: { resubmit },
      worker: { concurrency: 4, attempts: 3, backoffMs: 100, timeoutMs: 2000, feedLagMs: 300, feedPollMs: 50, ...worker },
      waiting: { pollMs: 20 },
      output: { out, rejects: join(dir, 'rejects.csv') },
    });
    const rows = parse(readFileSync(out), { columns: true }) as Array<Record<string, string>>;
    return { result, rows };
  };

  it.beforeAll(async ({ redis: client, dir: folder, profile: sample }) => {
    redis = client;
    dir = folder;
    profile = await sample.load();
  });
  it.beforeEach(({ prefix: made, db, openPrefix, openSandbox: open }) => {
    prefix = made;
    store = db;
    freshPrefix = () => openPrefix('worker');
    openSandbox = open;
    logs = '';
  });

  it('retries a 501 that clears after two tries and ends queued with attempts 3', async () => {
    await start({ egronRegions: ['Москва'] });
    const running = run([WITH_NUMBER], { attempts: 5 });
    // These waits had no deadline but the test's own (vitest.config.ts).
    await waitFor(() => (sandbox.stats().docflowCalls['501'] ?? 0) >= 2, { timeoutMs: 30_000, intervalMs: 5, what: 'two 501 answers' });
    sandbox.configure({ egronRegions: [] });
    const { rows } = await running;
    expect(rows[0]).toMatchObject({ outcome: 'queued', attempts: '3', httpStatus: '200' });
    expect(sandbox.stats().docflowCalls['501']).toBe(2);
  });

  it('ends unavailable after --attempts 501s, and asks suggest only once: its claim keeps the number between tries', async () => {
    await start({ egronRegions: ['Новосибирская область'] });
    const { rows, result } = await run([BY_SUGGEST]);
    expect(rows[0]).toMatchObject({ outcome: 'unavailable', attempts: '3', httpStatus: '501' });
    expect(rows[0]!.cadastralNumber).toMatch(/^54:35:/);
    expect(sandbox.stats().suggestCalls).toBe(1);
    expect(sandbox.stats().docflowCalls['501']).toBe(3);
    expect(result.exitCode).toBe(3);
  });

  it('takes the deal out of every finished job with its outcome and leaves no checkpoint behind', async () => {
    await start({ egronRegions: ['Новосибирская область'] });
    const { rows } = await run([BY_SUGGEST, WITH_NUMBER]);
    expect(rows.map((r) => r.outcome)).toEqual(['unavailable', 'queued']);
    const keys = createKeys(prefix);
    const queue = new Queue<DealJobData>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    try {
      const jobs = await queue.getJobs(['completed', 'failed']);
      expect(jobs.map((j) => j.data.dealId).sort()).toEqual([WITH_NUMBER, BY_SUGGEST].sort());
      for (const job of jobs) {
        expect(Object.keys(job.data).sort()).toEqual(['batch', 'dealId', 'row']);
        const stored = await redis.hget(`${keys.bullPrefix}:${keys.queueName}:${job.id}`, 'data');
        expect(stored).not.toContain(row(job.data.dealId)[HEADER.indexOf('ownerSurname')]!);
      }
    } finally {
      await queue.close();
    }
    // Nothing of the suggest row's three tries is left in Redis: its number lived in its claim.
    expect(await redis.exists(keys.checkpoints('b'))).toBe(0);
  });

  it('retries 5xx and timeouts, then records failed; a timed-out call that made its docflow ends with it', async () => {
    await start({ fault5xx: 1 });
    const { rows } = await run([WITH_NUMBER], { attempts: 2 });
    expect(rows[0]).toMatchObject({ outcome: 'failed', attempts: '2' });
    expect(['500', '502', '503']).toContain(rows[0]!.httpStatus);
    await sandbox.close();
    // Every call times out before it reaches the gateway's answer: the suggest calls made nothing.
    await start({ latencyMs: 400 });
    // Fresh prefixes, and batches of their own: the database keeps batch b with its first file.
    prefix = freshPrefix();
    const slow = await run([BY_SUGGEST], { batch: 'slow', attempts: 2, timeoutMs: 100 });
    expect(slow.rows[0]).toMatchObject({ outcome: 'failed', attempts: '2', errorCode: 'TIMEOUT' });
    // The docflow call timed out after the gateway made it: the feed finds it, nothing is sent again.
    prefix = freshPrefix();
    const made = await run([WITH_NUMBER], { batch: 'made', attempts: 2, timeoutMs: 100 });
    expect(made.rows[0]).toMatchObject({ outcome: 'queued', docflowId: sandbox.docflows()[0]!.docflowId });
    expect(sandbox.stats().docflowsCreated).toBe(1);
  });

  it('keeps a batch with its outcomes 30 days after its load, and its profile in Redis as long, even when the load wrote no outcome', async () => {
    await start();
    await run([WITH_NUMBER]);
    const month = 29 * 24 * 3600 * 1000;
    expect(await outcomeCount(store.db, 'b')).toBe(1);
    expect(Number((await batchRow(store.db, 'b'))?.expires_at)).toBeGreaterThan(Date.now() + month);
    expect(await redis.pttl(createKeys(prefix).batch('b'))).toBeGreaterThan(month);
  });

  it('records forbidden on a 403 at once, without retrying', async () => {
    await start({ restrictedSessions: [SESSION] });
    const { rows } = await run([WITH_NUMBER]);
    expect(rows[0]).toMatchObject({ outcome: 'forbidden', attempts: '1', httpStatus: '403' });
    expect(sandbox.stats().docflowCalls['403']).toBe(1);
  });

  it('records rejected on a 400 with the gateway code, message and target, never retried', async () => {
    // The register's own data is broken: suggest gives a cadastral number the docflow refuses.
    const broken = REGISTRY.map((o) => (o.objectCn === '54:35:101234:81' ? { ...o, objectCn: '54:35:1012:81' } : o));
    await start({ registry: broken });
    const { rows } = await run([BY_SUGGEST]);
    expect(rows[0]).toMatchObject({ outcome: 'rejected', attempts: '1', httpStatus: '400', errorCode: 'validation' });
    expect(rows[0]!.errorMessage).toContain('options.object.cadastralNumber');
    expect(sandbox.stats().docflowCalls['400']).toBe(1);
  });

  it('still ends with one docflow when the answer to its creation is lost: the news feed finds it, nothing is sent again', async () => {
    await start({ faultLost: 1, newsLagMs: 100 });
    const { rows } = await run([WITH_NUMBER]);
    expect(rows[0]).toMatchObject({ outcome: 'queued', attempts: '2' });
    expect(rows[0]!.errorMessage).toContain('news feed');
    expect(sandbox.stats()).toMatchObject({ docflowsCreated: 1, requestIdsWithSeveralDocflows: 0 });
    expect(sandbox.docflows()[0]!.docflowId).toBe(rows[0]!.docflowId);
  });

  it('sends a deal submitted in an earlier batch only with --resubmit, and only once the registry refused it', async () => {
    await start();
    const first = await run([WITH_NUMBER, BY_SUGGEST], { batch: 'first' });
    const calls = sandbox.stats().suggestCalls;
    const again = await run([WITH_NUMBER, BY_SUGGEST], { batch: 'again' });
    expect(again.rows.map((r) => [r.outcome, r.docflowId, r.attempts])).toEqual(
      first.rows.map((r) => ['already_submitted', r.docflowId, '0']),
    );
    // Decided at load: no job, not even a suggest call.
    expect(again.result.load).toMatchObject({ enqueued: 0, alreadySubmitted: 2 });
    expect(sandbox.stats().suggestCalls).toBe(calls);
    expect(sandbox.stats().docflowsCreated).toBe(2);
    // The registry did not refuse it (whatever state the feed shows: queued, sent, completed): it stands.
    const standing = await run([WITH_NUMBER], { batch: 'standing', resubmit: true });
    expect(standing.rows[0]).toMatchObject({ outcome: 'already_submitted', docflowId: first.rows[0]!.docflowId });
    expect(standing.rows[0]!.errorMessage).toMatch(
      /not sent again: --resubmit sends a deal again only once the registry refused its docflow \(state error\), and this one is /,
    );
    expect(sandbox.stats().docflowsCreated).toBe(2);
  });

  it('sends a deal the registry refused again with --resubmit, under the next resubmission number', async () => {
    await start({ faultRegistry: 1, lifecycleMs: 0 });
    const first = await run([WITH_NUMBER], { batch: 'first' });
    await refusedByRegistry(WITH_NUMBER);
    const resent = await run([WITH_NUMBER], { batch: 'resent', resubmit: true });
    expect(resent.rows[0]!.outcome).toBe('queued');
    expect(resent.rows[0]!.docflowId).not.toBe(first.rows[0]!.docflowId);
    const inn = profile.organization.inn;
    expect(
      sandbox
        .docflows()
        .map((d) => d.requestId)
        .sort(),
    ).toEqual([`${inn}:reg:0:${WITH_NUMBER}`, `${inn}:reg:1:${WITH_NUMBER}`]);
  });

  it('catches a deal submitted by another batch after the load, before its docflow', async () => {
    await start();
    const keys = createKeys(prefix);
    const file = join(dir, 'late.csv');
    await writeFile(file, csvText([row(BY_SUGGEST)]));
    const loaded = await loadBatch({
      file,
      batch: 'late',
      profile,
      redis,
      keys,
      db: store.db,
      logger: createLogger({ level: 'silent' }),
      rejects: join(dir, 'late.rejects.csv'),
    });
    expect(loaded.enqueued).toBe(1);
    // Meanwhile another batch's worker got it to the registry.
    const inn = profile.organization.inn;
    await putLedgerRow(store.db, {
      bank: inn,
      deal_id: BY_SUGGEST,
      n: 0,
      state: 'submitted',
      docflow_id: 'df-of-batch-early',
      outcome: 'queued',
      batch: 'early',
      row: 7,
      at: new Date().toISOString(),
      via: 'answer',
    });
    const dealWorker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      concurrency: 2,
      attempts: 3,
      backoffMs: 100,
      timeoutMs: 2000,
      logger: createLogger({ level: 'silent' }),
    });
    try {
      await waitFor(async () => (await outcomeCount(store.db, 'late')) !== 0, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: 'the outcome',
      });
    } finally {
      await dealWorker.close(5000);
    }
    const outcome = await storedOutcome(store.db, 'late', 1);
    expect(outcome).toMatchObject({ outcome: 'already_submitted', docflowId: 'df-of-batch-early', attempts: 1 });
    expect(sandbox.stats().docflowsCreated).toBe(0);
    // The first run asked suggest before Redis: the one call the late ledger entry cost.
    expect(sandbox.stats().suggestCalls).toBe(1);
  });

  it('keeps the outcomes of a batch loaded again, whatever the ledger says now', async () => {
    await start({ faultRegistry: 1, lifecycleMs: 0 });
    const first = await run([WITH_NUMBER], { batch: 'A' });
    expect(first.rows[0]!.outcome).toBe('queued');
    // The registry refused it, and another batch sends the deal again on purpose: the ledger now points there.
    await refusedByRegistry(WITH_NUMBER);
    const resent = await run([WITH_NUMBER], { batch: 'C', resubmit: true });
    expect(resent.rows[0]!.docflowId).not.toBe(first.rows[0]!.docflowId);
    // A's file run again (a second cron, an operator): A's row keeps its own docflow.
    const again = await run([WITH_NUMBER], { batch: 'A' });
    expect(again.result.load).toMatchObject({ alreadySubmitted: 0 });
    expect(again.rows[0]).toMatchObject({ outcome: 'queued', docflowId: first.rows[0]!.docflowId });
    expect(sandbox.stats().docflowsCreated).toBe(2);
  });

  it('makes no Redis script of its own before the docflow on a first run, also after waiting for its batch to load', async () => {
    await start();
    const keys = createKeys(prefix);
    const logger = createLogger({ level: 'silent' });
    const file = join(dir, 'first.csv');
    await writeFile(file, csvText([row(BY_SUGGEST), row(WITH_NUMBER)]));
    await loadBatch({ file, batch: 'first', profile, redis, keys, db: store.db, logger, rejects: join(dir, 'first.rejects.csv') });
    // As if the load were still going: the worker holds the jobs back until it ends.
    await setBatchState(store.db, 'first', 'loading');
    const scripts: string[][] = [];
    const monitor = await monitorRedis((args) => {
      if (args[0]?.toLowerCase() === 'evalsha' && args.includes(keys.checkpoints('first'))) scripts.push(args);
    });
    const dealWorker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      concurrency: 2,
      attempts: 3,
      backoffMs: 100,
      timeoutMs: 2000,
      logger,
    });
    try {
      // The fleet's follower takes the feed's cursor as it starts; the claims come after it.
      await waitFor(async () => (await feedRow(store.db)) !== undefined, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: "the feed's cursor",
      });
      await waitFor(async () => (await dealWorker.queue.getDelayedCount()) >= 2, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: 'both jobs held back',
      });
      await setBatchState(store.db, 'first', 'loaded');
      for (const job of await dealWorker.queue.getDelayed()) await job.promote();
      await waitFor(async () => (await outcomeCount(store.db, 'first')) >= 2, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: 'both outcomes',
      });
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await dealWorker.close(5000);
      monitor.close();
    }
    const outcomes = await storedOutcomes(store.db, 'first');
    const found = outcomes[0]!;
    expect(outcomes.map((o) => o.outcome)).toEqual(['queued', 'queued']);
    // The claim and the outcome are the database's; in Redis, the row's work (its arguments: row,
    // ...). Row 1 (found through suggest): its claim keeps the cadastral number, so nothing before
    // its docflow, then, after the outcome's commit, its work dropped. Row 2 (its number given):
    // the same.
    const rowOf = (args: string[]): string | undefined => args.slice(3 + Number(args[2]))[0];
    const ofRow = (n: number) => scripts.filter((args) => rowOf(args) === String(n));
    const afterOutcome = (args: string[] | undefined) => args?.includes(keys.rows('first'));
    expect(found.cadastralNumber).toMatch(/^54:35:/);
    expect(ofRow(1)).toHaveLength(1);
    expect(afterOutcome(ofRow(1)[0])).toBe(true);
    expect(ofRow(2)).toHaveLength(1);
    expect(afterOutcome(ofRow(2)[0])).toBe(true);
  });

  it("completes a not_found row's job with its record as the return value, and leaves nothing in the failed set", async () => {
    // A register with nothing at the row's address: suggest finds no object.
    await start({ registry: [] });
    const { rows, result } = await run([BY_SUGGEST]);
    expect(rows[0]).toMatchObject({ outcome: 'not_found', errorCode: 'NOT_FOUND', attempts: '1' });
    expect(result.exitCode).toBe(3);
    const keys = createKeys(prefix);
    const queue = new Queue<DealJobData, OutcomeRecord>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    try {
      expect(await queue.getJobCounts('completed', 'failed')).toEqual({ completed: 1, failed: 0 });
      const job = (await queue.getJob(dealJobId('b', BY_SUGGEST)))!;
      expect(await job.getState()).toBe('completed');
      expect(job.returnvalue).toEqual(await storedOutcome(store.db, 'b', 1));
      expect(job.returnvalue).toMatchObject({ row: 1, dealId: BY_SUGGEST, outcome: 'not_found', errorCode: 'NOT_FOUND' });
      expect(job.failedReason).toBeUndefined();
      expect(job.stacktrace).toEqual([]);
      expect(Object.keys(job.data).sort()).toEqual(['batch', 'dealId', 'row']);
    } finally {
      await queue.close();
    }
  });

  it('still fails a job that stalled more than allowed, a failure of the machinery, with its outcome recorded once', async () => {
    await start();
    const keys = createKeys(prefix);
    const file = join(dir, 'stalled.csv');
    await writeFile(file, csvText([row(WITH_NUMBER)]));
    await loadBatch({
      file,
      batch: 'stalled',
      profile,
      redis,
      keys,
      db: store.db,
      logger: createLogger({ level: 'silent' }),
      rejects: join(dir, 'stalled.rejects.csv'),
    });
    // Its workers died under it TUNABLES.maxStalls times already, and the last one took it and died too:
    // active, without a lock, its stall counter at the limit.
    const id = dealJobId('stalled', WITH_NUMBER);
    const bull = `${keys.bullPrefix}:${keys.queueName}`;
    await redis.multi().lrem(`${bull}:wait`, 0, id).lpush(`${bull}:active`, id).hset(`${bull}:${id}`, 'stc', TUNABLES.maxStalls).exec();
    const failed: string[] = [];
    const dealWorker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      concurrency: 2,
      attempts: 3,
      backoffMs: 100,
      timeoutMs: 2000,
      lockMs: 300,
      logger: createLogger({ level: 'silent' }),
    });
    dealWorker.worker.on('failed', (job) => failed.push(job?.id ?? ''));
    try {
      await waitFor(async () => (await dealWorker.queue.getJobState(id)) === 'failed', {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: 'the stalled job failed',
      });
    } finally {
      // close() waits for the net's write.
      await dealWorker.close(5000);
    }
    expect(failed).toEqual([id]);
    const queue = new Queue<DealJobData, OutcomeRecord>(keys.queueName, { connection: redis, prefix: keys.bullPrefix });
    try {
      const job = (await queue.getJob(id))!;
      expect(job.failedReason).toBe('job stalled more than allowable limit');
      expect(job.returnvalue).toBeNull();
      expect(job.data).not.toHaveProperty('deal');
    } finally {
      await queue.close();
    }
    // One outcome, the net's: nothing ran the job, nothing was sent.
    const outcomes = await storedOutcomes(store.db, 'stalled');
    expect(outcomes.map((o) => o.row)).toEqual([1]);
    expect(outcomes[0]).toMatchObject({ row: 1, dealId: WITH_NUMBER, outcome: 'failed', errorCode: 'ERR_JOB_STALLED' });
    expect(sandbox.stats().docflowsCreated).toBe(0);
  });

  it('logs per job with batch, row, dealId and attempt, and no personal data or session id even at debug', async () => {
    await start({ egronRegions: ['Москва'] });
    await run([WITH_NUMBER, BY_SUGGEST], { attempts: 2 });
    const lines = logs
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.dealId === WITH_NUMBER && l.attempt === 2 && l.batch === 'b' && l.row === 1)).toBe(true);
    expect(logs).not.toContain(SESSION);
    for (const id of [WITH_NUMBER, BY_SUGGEST]) {
      const r = row(id);
      for (const field of ['ownerSurname', 'ownerName', 'ownerSnils', 'ownerDocNumber']) {
        const value = r[HEADER.indexOf(field)]!;
        expect(logs).not.toContain(value);
        expect(logs).not.toContain(value.replace(/\D/g, '') || value);
      }
    }
  });
});

describe('--rate: gateway requests per second across every worker', () => {
  rated('grants at most N requests in any second of Redis time, and says how long to wait', async ({ redis, keys }) => {
    const limiter = createRequestLimiter(redis, keys.rate, 10);
    const grants = await Promise.all(Array.from({ length: 60 }, () => limiter.take()));
    const granted = new Map<number, number>();
    for (const g of grants) if (g.waitMs === 0) granted.set(g.second, (granted.get(g.second) ?? 0) + 1);
    for (const n of granted.values()) expect(n).toBeLessThanOrEqual(10);
    expect([...granted.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(10);
    const refused = grants.filter((g) => g.waitMs > 0);
    expect(refused.length).toBeGreaterThan(0);
    for (const g of refused) expect(g.waitMs).toBeLessThanOrEqual(1000);
  });

  rated('still finishes every row when the rate is lower than the work', async ({ sandbox, dir, redis, keys, db: store, profile }) => {
    const file = join(dir, 'rate.csv');
    const ids = [WITH_NUMBER, BY_SUGGEST, 'NSK-2026-000124', 'EKB-2026-000311', 'KZN-2026-000051'];
    await writeFile(file, csvText(ids.map(row)));
    const result = await runBatch({
      file,
      profile: await profile.load(),
      batch: 'rated',
      redis,
      keys,
      db: store.db,
      logger: createLogger({ level: 'silent' }),
      apiUrl: sandbox.url,
      sessionId: SESSION,
      processor: createDealProcessor,
      worker: { concurrency: 5, attempts: 2, backoffMs: 100, timeoutMs: 2000, rate: 3 },
      waiting: { pollMs: 20 },
      output: { out: join(dir, 'out.csv'), rejects: join(dir, 'r.csv') },
    });
    expect(result.results.counts.queued).toBe(5);
    expect(sandbox.stats().docflowsCreated).toBe(5);
    // Jobs the rate put back (some after their checkpoint) asked suggest once a row all the same.
    const bySuggest = ids.filter((id) => row(id)[HEADER.indexOf('cadastralNumber')] === '').length;
    expect(bySuggest).toBeGreaterThan(1);
    expect(sandbox.stats().suggestCalls).toBe(bySuggest);
  });
});

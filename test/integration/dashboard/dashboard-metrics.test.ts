/**
 * The per-batch, per-schedule and pause metrics of `/metrics` (issue 23, point 4), and our
 * docflows' states and the feed's counters: read from Redis and the database at each scrape,
 * after a sample run, a paused queue, real schedule ticks and docflows the feed moved.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { describe, expect, afterAll } from 'vitest';
import { batchStatus } from '../../../src/batch/batch-status.js';
import { createBatchStore } from '../../../src/batch/batch-store.js';
import { createBatchFigures, RECENT_MS } from '../../../src/dashboard/batch-figures.js';
import { readFeedState } from '../../../src/feed/feed-store.js';
import { docflowStateCounts } from '../../../src/ledger/docflows.js';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { createLogger } from '../../../src/logger.js';
import { createOutcomeStore } from '../../../src/outcomes/store.js';
import { readTicks, TICK_RECORD_MS } from '../../../src/redis/schedule-ticks.js';
import { rememberDone } from '../../../src/schedule/inbox-memory.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import {
  basic,
  batchHarness,
  call,
  CRIMEA,
  EGRON,
  INVALID,
  BY_SUGGEST,
  WITH_NUMBER,
  runDashboardBatch,
  type DashboardBatch,
} from '../../helpers/dashboard-batch.js';
import { deleteOutcome, putOutcome, storedOutcome, storedOutcomes } from '../../helpers/outcomes.js';
import { putDocflowRow } from '../../helpers/ledger-rows.js';

const CREDENTIALS = { user: 'ops', password: 'metrics-test-password' };
const AUTH = basic(CREDENTIALS.user, CREDENTIALS.password);

const it = batchHarness({ label: 'dashboard-metrics', sandbox: { egronRegions: [CRIMEA] } });

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
function samples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}
const pick = (all: Sample[], name: string, labels: Record<string, string> = {}): Sample[] =>
  all.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const value = (all: Sample[], name: string, labels: Record<string, string> = {}): number | undefined => pick(all, name, labels)[0]?.value;

describe('/metrics: batches, schedules and the pause, read at each scrape', () => {
  let night: DashboardBatch;
  let dashboard: RunningDashboard;
  let dir: string;
  const scrape = async (): Promise<Sample[]> => {
    const answer = await call(`${dashboard.url}/metrics`, { authorization: AUTH });
    expect(answer.status, answer.text).toBe(200);
    return samples(answer.text);
  };

  it.beforeAll(async ({ redis, keys, prefix, db, dir: folder, sandbox, profile }) => {
    night = await runDashboardBatch({ redis, keys, prefix, db, dir: folder, sandbox, profile }, [BY_SUGGEST, WITH_NUMBER, INVALID, EGRON]);
    dashboard = await startDashboard({
      redis: night.redis,
      keys: night.keys,
      db: night.db,
      host: '127.0.0.1',
      port: 0,
      credentials: CREDENTIALS,
    });
    // The schedules' folders, apart from the batch's files.
    dir = join(folder, 'schedules');
    await mkdir(dir);
  });
  afterAll(async () => {
    await dashboard?.close();
  });

  it("shows the batch's rows per outcome as `status` counts them, every outcome with pending 0, and its load and progress times", async () => {
    const all = await scrape();
    const status = await batchStatus(night.redis, night.keys, night.db, night.batch);
    expect(status.outcomes).toEqual({ queued: 2, invalid: 1, unavailable: 1 });
    const rows = pick(all, 'realty_batch_rows', { batch: night.batch });
    expect(rows).toHaveLength(11);
    expect(value(all, 'realty_batch_rows', { batch: night.batch, outcome: 'queued' })).toBe(status.outcomes.queued);
    expect(value(all, 'realty_batch_rows', { batch: night.batch, outcome: 'invalid' })).toBe(1);
    expect(value(all, 'realty_batch_rows', { batch: night.batch, outcome: 'unavailable' })).toBe(1);
    expect(value(all, 'realty_batch_rows', { batch: night.batch, outcome: 'pending' })).toBe(0);
    expect(rows.reduce((sum, s) => sum + s.value, 0)).toBe(status.total);

    const meta = await createBatchStore(night.redis, night.keys, night.db).get(night.batch);
    expect(value(all, 'realty_batch_loaded_timestamp_seconds', { batch: night.batch })).toBe(Date.parse(meta!.loadedAt!) / 1000);
    const records = await createOutcomeStore(night.redis, night.keys, { db: night.db }).range(night.batch, 1, status.total);
    const latest = Math.max(...records.map((r) => Date.parse(r!.finishedAt)));
    expect(latest).toBeGreaterThanOrEqual(Date.parse(meta!.loadedAt!));
    expect(value(all, 'realty_batch_last_progress_timestamp_seconds', { batch: night.batch })).toBe(latest / 1000);
  });

  it('counts again when a row changes its outcome count, and leaves out a finished batch a day after its last row', async () => {
    const figures = createBatchFigures(night.db);
    const [first] = await figures.read();
    expect(first?.rows.pending).toBe(0);
    // A row taken back (as `retry` does): pending again, and counted so.
    const row1 = (await storedOutcome(night.db, night.batch, 1))!;
    await deleteOutcome(night.db, night.batch, 1);
    try {
      const [again] = await figures.read();
      expect(again?.rows.pending).toBe(1);
      expect(Object.values(again!.rows).reduce((a, b) => a + b, 0)).toBe(4);
      // Unfinished: still shown long after.
      expect(await figures.read(Date.now() + 2 * RECENT_MS)).toHaveLength(1);
    } finally {
      await putOutcome(night.db, night.batch, row1);
    }
    expect(await figures.read(first!.lastProgressAt + RECENT_MS + 1000)).toEqual([]);
  });

  it('counts an outcome replaced without changing the number of rows at the next scrape', async () => {
    const figures = createBatchFigures(night.db);
    const [before] = await figures.read();
    const stored = (await storedOutcomes(night.db, night.batch)).find((o) => o.outcome === 'unavailable')!;
    await putOutcome(night.db, night.batch, { ...stored, outcome: 'queued' });
    try {
      const [after] = await figures.read();
      expect(after?.rows).toMatchObject({ queued: before!.rows.queued + 1, unavailable: before!.rows.unavailable - 1, pending: 0 });
      expect(value(await scrape(), 'realty_batch_rows', { batch: night.batch, outcome: 'queued' })).toBe(before!.rows.queued + 1);
    } finally {
      await putOutcome(night.db, night.batch, stored);
    }
  });

  it("shows our docflows per state and the feed's counters as the database holds them, read again at each scrape", async () => {
    const before = await docflowStateCounts(night.db);
    const n = (state: string): number => before[state] ?? 0;
    let all = await scrape();
    for (const [state, n] of Object.entries(before)) expect(value(all, 'realty_docflows', { state }), state).toBe(n);
    const feed = await readFeedState(night.db);
    for (const kind of ['followed', 'resolved', 'unknown', 'conflicts'] as const) {
      expect(value(all, 'realty_feed_items_total', { kind }), kind).toBe(feed[kind]);
    }

    // Two more docflows the feed showed (one waits for a payment, one the registry refused) and a page of items counted.
    const ids = ['metrics-df-1', 'metrics-df-2'];
    const at = new Date().toISOString();
    await putDocflowRow(night.db, {
      docflow_id: ids[0]!,
      bank: '7701234567',
      deal_id: 'M-1',
      st: 'suspended',
      sat: at,
      req: 'payment',
      req_at: at,
    });
    await putDocflowRow(night.db, { docflow_id: ids[1]!, bank: '7701234567', deal_id: 'M-2', st: 'error', sat: at });
    await night.db.kysely
      .updateTable('feed')
      .set((eb) => ({ followed: eb('followed', '+', 2), unknown: eb('unknown', '+', 5) }))
      .where('id', '=', 1)
      .execute();
    try {
      all = await scrape();
      expect(value(all, 'realty_docflows', { state: 'suspended' })).toBe(n('suspended') + 1);
      expect(value(all, 'realty_docflows', { state: 'error' })).toBe(n('error') + 1);
      expect(value(all, 'realty_docflows', { state: 'queued' })).toBe(n('queued'));
      expect(value(all, 'realty_feed_items_total', { kind: 'followed' })).toBe(feed.followed + 2);
      expect(value(all, 'realty_feed_items_total', { kind: 'unknown' })).toBe(feed.unknown + 5);
    } finally {
      await night.db.kysely.deleteFrom('docflows').where('docflow_id', 'in', ids).execute();
      await night.db.kysely
        .updateTable('feed')
        .set((eb) => ({ followed: eb('followed', '-', 2), unknown: eb('unknown', '-', 5) }))
        .where('id', '=', 1)
        .execute();
    }
  });

  it('shows realty_queue_paused on the series of its reason: session, other, and 0 on both once resumed', async () => {
    const queue = new Queue(night.keys.queueName, { connection: night.redis, prefix: night.keys.bullPrefix });
    try {
      let all = await scrape();
      expect(value(all, 'realty_queue_paused', { reason: 'session' })).toBe(0);
      expect(value(all, 'realty_queue_paused', { reason: 'other' })).toBe(0);
      await queue.pause();
      await night.redis.set(night.keys.pauseReason, 'session');
      all = await scrape();
      expect(value(all, 'realty_queue_paused', { reason: 'session' })).toBe(1);
      expect(value(all, 'realty_queue_paused', { reason: 'other' })).toBe(0);
      await night.redis.del(night.keys.pauseReason);
      all = await scrape();
      expect(value(all, 'realty_queue_paused', { reason: 'session' })).toBe(0);
      expect(value(all, 'realty_queue_paused', { reason: 'other' })).toBe(1);
      await queue.resume();
      all = await scrape();
      expect(pick(all, 'realty_queue_paused').map((s) => s.value)).toEqual([0, 0]);
    } finally {
      await queue.resume();
      await queue.close();
    }
  });

  it("records each schedule tick's end and success: 1 for a tick whose files all ended done or duplicate, 0 for one whose file failed", async () => {
    const logger = createLogger({ level: 'silent' });
    const outbox = join(dir, 'outbox');
    const good = join(dir, 'good-inbox');
    const bad = join(dir, 'bad-inbox');
    await Promise.all([mkdir(outbox), mkdir(good), mkdir(bad)]);
    // Settled long ago: taken at once, no settle wait.
    const past = new Date(Date.now() - 120_000);
    const id = HEADER.indexOf('dealId');
    const drop = async (inbox: string, name: string, tag: string): Promise<void> => {
      const rows = ROWS.filter((r) => r[0] === WITH_NUMBER).map((r) => [`${tag}-${r[id]}`, ...r.slice(1)]);
      await writeFile(join(inbox, name), csvText(rows));
      await utimes(join(inbox, name), past, past);
    };
    await drop(good, 'bank-g.csv', 'G');
    // Its content ran before (no worker runs here to finish a batch): the tick reports it as a duplicate, which is a success.
    const sha256 = createHash('sha256')
      .update(await readFile(join(good, 'bank-g.csv')))
      .digest('hex');
    await rememberDone(night.db, good, sha256, { file: 'bank-g-before.csv', batch: 'earlier', at: past.toISOString() }, RECENT_MS);
    await drop(bad, 'bank-h.csv', 'H');
    const profile = join(ROOT, 'samples/bank-profile.json');

    const before = Date.now();
    const ok = await runTick(
      { name: 'good-nightly', inbox: good, outbox, profile },
      { redis: night.redis, keys: night.keys, db: night.db, logger, pollMs: 50 },
    );
    expect(ok.files).toMatchObject([{ status: 'duplicate' }]);
    // A profile that is not there: the file is set aside as failed.
    const failed = await runTick(
      { name: 'bad-nightly', inbox: bad, outbox, profile: join(dir, 'no-such-profile.json') },
      { redis: night.redis, keys: night.keys, db: night.db, logger, pollMs: 50 },
    );
    expect(failed.files).toMatchObject([{ status: 'failed' }]);
    const after = Date.now();

    const all = await scrape();
    expect(value(all, 'realty_schedule_last_tick_success', { schedule: 'good-nightly' })).toBe(1);
    expect(value(all, 'realty_schedule_last_tick_success', { schedule: 'bad-nightly' })).toBe(0);
    for (const schedule of ['good-nightly', 'bad-nightly']) {
      const at = value(all, 'realty_schedule_last_tick_timestamp_seconds', { schedule })!;
      expect(at * 1000).toBeGreaterThanOrEqual(before);
      expect(at * 1000).toBeLessThanOrEqual(after);
    }
    // The hash expires on its own.
    const ttl = await night.redis.pttl(night.keys.scheduleTick('good-nightly'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(TICK_RECORD_MS);
    expect((await readTicks(night.redis, night.keys)).find((t) => t.name === 'bad-nightly')?.error).toMatch(/1 file/);

    // A tick over an empty inbox ran well: the bad schedule's figure comes back to 1.
    await mkdir(join(dir, 'empty'));
    await runTick(
      { name: 'bad-nightly', inbox: join(dir, 'empty'), outbox, profile },
      { redis: night.redis, keys: night.keys, db: night.db, logger },
    );
    expect(value(await scrape(), 'realty_schedule_last_tick_success', { schedule: 'bad-nightly' })).toBe(1);
  });

  it('records a tick that fails as a whole (its inbox inside its outbox) as 0', async () => {
    const logger = createLogger({ level: 'silent' });
    const outbox = join(dir, 'nested-out');
    await mkdir(join(outbox, 'in'), { recursive: true });
    await expect(
      runTick(
        { name: 'nested', inbox: join(outbox, 'in'), outbox, profile: join(ROOT, 'samples/bank-profile.json') },
        { redis: night.redis, keys: night.keys, db: night.db, logger },
      ),
    ).rejects.toThrow(/separate folders/);
    expect(value(await scrape(), 'realty_schedule_last_tick_success', { schedule: 'nested' })).toBe(0);
  });
});

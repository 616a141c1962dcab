/**
 * A database restored from an older copy, end to end on SQLite against the sandbox (which makes
 * a docflow for every creation call: a deal sent twice shows as two): the copy taken with the
 * online backup, more deals filed, the copy put back, the same file run again. Nothing is filed
 * twice, and the restore is said in the follower's log, `status`'s line and the gauge. And a
 * worker with no follower: its new deals wait, saying why, until a follower reads the feed.
 */
import { copyFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Redis } from 'ioredis';
import { describe, expect, afterEach } from 'vitest';
import { runBatch } from '../../../src/pipeline/run-batch.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { openDatabase, type Database } from '../../../src/db/database.js';
import { migrate } from '../../../src/db/migrate.js';
import { deploymentOf } from '../../../src/db/deployment.js';
import type { DatabaseTarget } from '../../../src/db/location.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { startFeedFollower, type FeedFollower } from '../../../src/feed/follower.js';
import { createRealtyClient } from '../../../src/realty/client.js';
import { createDashboardMetrics } from '../../../src/dashboard/metrics.js';
import { openQueue } from '../../../src/queue/deal-queue.js';
import { describeRestore } from '../../../src/ledger/restore.js';
import { FEED_SLACK_MS } from '../../../src/ledger/claim.js';
import { requestIdOf } from '../../../src/ledger/entry.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { createTestTarget, type TestTarget } from '../../helpers/database.js';
import { waitFor } from '../../helpers/wait-for.js';
import { feedRow, ledgerRow } from '../../helpers/ledger-rows.js';
import { storedOutcome } from '../../helpers/outcomes.js';

const SESSION = 'restore-session';
const quiet = createLogger({ level: 'silent' });
const FAST = { concurrency: 4, attempts: 3, backoffMs: 50, timeoutMs: 2000, feedLagMs: 300, feedPollMs: 50, lockMs: 1000 };
const POLL = { timeoutMs: 30_000, intervalMs: 25 };
/** Sample rows with their cadastral numbers (no suggest needed). */
const FIRST = ['MSK-2026-004511'];
const LATER = ['SPB-2026-010078', 'MSK-2026-004512'];

/** JSON log lines written to a stream, for a test to read. */
function capturedLog(level = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new PassThrough();
  let rest = '';
  destination.on('data', (d: Buffer) => {
    const parts = (rest + d.toString()).split('\n');
    rest = parts.pop()!;
    for (const p of parts) if (p.trim()) lines.push(JSON.parse(p) as Record<string, unknown>);
  });
  return { logger: createLogger({ level, destination }), lines };
}

// The client, folder and profile once for the file; a prefix and sandbox of each test's own. The
// database is the test's own too, made here: the test copies its file and opens the copy.
const it = harness({
  per: 'file',
  each: ['prefix', 'sandbox'],
  label: 'restore',
  sandbox: { sessions: [SESSION], newsLagMs: 100 },
  redis: { maxRetriesPerRequest: null },
  engine: 'none',
});

describe('a database restored from an older copy (SQLite, the sandbox)', () => {
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  let sandbox: RunningSandbox;
  let prefix: string;
  let keys: Keys;
  let made: TestTarget;
  let db: Database;
  const workers: DealWorker[] = [];
  const followers: FeedFollower[] = [];

  const open = async (target: DatabaseTarget): Promise<Database> => {
    const opened = openDatabase(target);
    await migrate(opened);
    return opened;
  };
  const fileOf = async (name: string, dealIds: string[]) => {
    const file = join(dir, `${name}.csv`);
    await writeFile(file, csvText(dealIds.map((d) => ROWS.find((r) => r[0] === d)!)));
    return file;
  };
  const run = async (batch: string, file: string, logger = quiet) =>
    runBatch({
      file,
      profile,
      batch,
      redis,
      keys,
      db,
      logger,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      processor: createDealProcessor,
      worker: FAST,
      waiting: { pollMs: 20 },
      output: { out: join(dir, `${batch}.results.csv`), rejects: join(dir, `${batch}.rejects.csv`) },
    });
  const docflowsOf = (dealId: string) => sandbox.docflows().filter((d) => d.requestId === requestIdOf(profile.organization.inn, dealId));

  it.beforeAll(async ({ redis: client, dir: folder, profile: sample }) => {
    redis = client;
    dir = folder;
    profile = await sample.load();
  });
  it.beforeEach(async ({ prefix: given, keys: givenKeys, sandbox: started }) => {
    prefix = given;
    keys = givenKeys;
    sandbox = started;
    made = await createTestTarget('sqlite');
    db = await open(made.target);
    await deploymentOf(db, prefix);
  });
  // Before the harness closes the test's sandbox and deletes its prefix.
  afterEach(async () => {
    for (const f of followers.splice(0)) await f.close();
    for (const w of workers.splice(0)) await w.close(2000);
    await db.close().catch(() => undefined);
    await made.drop();
  });

  it('files nothing twice when the same file runs again on the copy, gives each row its docflow, and says the database went back', async () => {
    expect((await run('first', await fileOf('first', FIRST))).exitCode).toBe(0);
    // The copy, as `realty-batch db backup` makes it, while nothing else runs.
    const copy = join(dir, 'copy.db');
    await db.backup!(copy);
    const later = await fileOf('later', LATER);
    const filed = await run('later', later);
    expect(filed.results.counts).toMatchObject({ queued: LATER.length });
    const made1 = sandbox.docflows().length;
    expect(made1).toBe(FIRST.length + LATER.length);
    // The night goes on: the fleet's follower sees the later docflows in the feed (the witness in
    // Redis counts them) before the database is put back.
    const feedClient = createRealtyClient({ baseUrl: sandbox.url, sessionId: SESSION, timeoutMs: 2000 });
    followers.push(startFeedFollower({ redis, keys, db, client: feedClient, logger: quiet, pollMs: 50 }));
    await waitFor(
      async () =>
        (await db.kysely.selectFrom('docflows').select('docflow_id').where('deal_id', 'in', LATER).execute()).length === LATER.length,
      { ...POLL, what: 'the later docflows followed' },
    );
    await followers.pop()!.close();
    await feedClient.close();

    // Restored: every process stopped, the copy put in place of the live file and its -wal and -shm removed.
    await db.close();
    const path = (made.target as { path: string }).path;
    await copyFile(copy, path);
    await rm(`${path}-wal`, { force: true });
    await rm(`${path}-shm`, { force: true });
    db = await open(made.target);
    for (const dealId of LATER) expect(await ledgerRow(db, profile.organization.inn, dealId)).toBeUndefined();
    // `status` says so before any process runs: the database holds less of the feed than the fleet saw.
    expect(await describeRestore(db, redis, keys)).toMatch(
      /^The database was restored from an older copy: the database has stored \d+ news feed items, \d+ fewer/,
    );

    // A copy older than the claims' window (two poll intervals and the slack): a restore is of a
    // backup taken before the night's later docflows, not one the same instant.
    await waitFor(
      async () => {
        const feed = (await feedRow(db))!;
        return (await db.now()) - Number(feed.covered_at) > 2 * Number(feed.poll_ms) + FEED_SLACK_MS;
      },
      { ...POLL, what: "the copy's last complete read older than the claims' window" },
    );
    // The gateway's feed answers nothing for the run's first moments: its claims come before any read.
    sandbox.configure({ newsOutage: true });
    const lit = setTimeout(() => sandbox.configure({ newsOutage: false }), 1500);
    const { logger, lines } = capturedLog();
    const again = await run('again', later, logger).finally(() => clearTimeout(lit));
    expect(again.exitCode).toBe(0);
    expect(sandbox.docflows()).toHaveLength(made1);
    expect(sandbox.stats().requestIdsWithSeveralDocflows).toBe(0);
    for (const [i, dealId] of LATER.entries()) {
      expect(docflowsOf(dealId)).toHaveLength(1);
      expect(await storedOutcome(db, 'again', i + 1)).toMatchObject({ outcome: 'queued', docflowId: docflowsOf(dealId)[0]!.docflowId });
    }
    // The rows waited for the feed, and said why.
    expect(lines.some((l) => l.level === 40 && String(l.msg).startsWith('the news feed is not known complete'))).toBe(true);
    // Said loudly: the follower's error line, `status`, the gauge.
    const said = lines.filter((l) => l.level === 50 && String(l.msg).startsWith('the database was restored from an older copy'));
    expect(said.length).toBeGreaterThanOrEqual(1);
    expect(said[0]).toMatchObject({ component: 'feed', givenBack: LATER.length });
    expect(await describeRestore(db, redis, keys)).toMatch(
      new RegExp(
        `^The database was restored from an older copy \\(first evidence .*The news feed gave back ${LATER.length} docflows the ledger lacked\\.`,
      ),
    );
    const queue = openQueue(redis, keys);
    try {
      expect(await createDashboardMetrics(redis, keys, db, queue).metrics()).toMatch(/^realty_ledger_restore_suspected 1$/m);
    } finally {
      await queue.close();
    }
  }, 90_000);

  it('makes new deals wait, saying why, while no follower reads the feed, and sends each once when one does', async () => {
    // The feed was followed, then every follower stopped an hour ago.
    const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: SESSION, timeoutMs: 2000 });
    const { ensureFeed } = await import('../../../src/feed/feed-store.js');
    await ensureFeed(db, client);
    await client.close();
    const hourAgo = (await db.now()) - 3_600_000;
    await db.kysely.updateTable('feed').set({ covered_at: hourAgo }).where('id', '=', 1).execute();

    const { logger, lines } = capturedLog('warn');
    const w = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      logger,
      ...FAST,
      track: false,
    });
    workers.push(w);
    await loadBatch({
      file: await fileOf('waits', LATER),
      batch: 'waits',
      profile,
      redis,
      keys,
      db,
      logger: quiet,
      rejects: join(dir, 'waits.rejects.csv'),
    });
    const said = await waitFor(() => lines.find((l) => String(l.msg).startsWith('the news feed is not known complete')), {
      ...POLL,
      what: 'the line',
    });
    expect(said).toMatchObject({ level: 40, lastCompleteRead: new Date(hourAgo).toISOString(), allowMs: 2250 });
    expect(String(said.msg)).toMatch(
      /its last complete read was 60 min ago .* `realty-batch work` and `run` follow it \(unless --no-track\), or run `realty-batch track`$/,
    );
    // Each job has waited at least twice, without a try: no claim, no call, no outcome.
    const queue = openQueue(redis, keys);
    try {
      await waitFor(
        async () => {
          const jobs = await queue.getJobs(['delayed', 'waiting', 'active']);
          return jobs.length === LATER.length && jobs.every((j) => (j.data.waits ?? 0) >= 2 && j.attemptsMade === 0);
        },
        { ...POLL, what: 'every job waiting twice' },
      );
    } finally {
      await queue.close();
    }
    for (const dealId of LATER) expect(await ledgerRow(db, profile.organization.inn, dealId)).toBeUndefined();
    expect(sandbox.stats().docflowsCreated).toBe(0);
    for (const i of LATER.keys()) expect(await storedOutcome(db, 'waits', i + 1)).toBeUndefined();

    // A follower reads the feed to its end: the deals go, once each.
    const feedClient = createRealtyClient({ baseUrl: sandbox.url, sessionId: SESSION, timeoutMs: 2000 });
    followers.push(startFeedFollower({ redis, keys, db, client: feedClient, logger: quiet, pollMs: 50 }));
    await waitFor(
      async () => {
        const outcomes = await Promise.all(LATER.map((_, i) => storedOutcome(db, 'waits', i + 1)));
        return outcomes.every((o) => o?.outcome === 'queued');
      },
      { ...POLL, what: 'every row queued' },
    );
    expect(Number((await feedRow(db))!.covered_at)).toBeGreaterThan(hourAgo);
    for (const dealId of LATER) expect(docflowsOf(dealId)).toHaveLength(1);
    await followers.pop()!.close();
    await feedClient.close();
  }, 60_000);
});

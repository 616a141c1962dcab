import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect, afterAll } from 'vitest';
import { DAY } from '../../../src/config.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import { SEEN_MS } from '../../../src/schedule/inbox-keys.js';
import { findDone, rememberDone } from '../../../src/schedule/inbox-memory.js';
import { inboxKey, runTick, type FileSummary } from '../../../src/schedule/run-tick.js';
import { listSchedules, type TickData } from '../../../src/schedule/scheduler.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';

const deals = (tag: string, n = 3): string => csvText(ROWS.slice(0, n).map((r) => [`${tag}-${r[0]}`, ...r.slice(1)]));
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const drop = async (file: string, text: string): Promise<void> => {
  await writeFile(file, text);
  const past = new Date(Date.now() - 120_000);
  await utimes(file, past, past);
};

// One database for the file: the worker, started once, serves every test's ticks. One client for
// the ticks and the worker (which duplicates it for its blocking calls).
const it = harness({ per: 'file', label: 'schedule-folders', redis: { maxRetriesPerRequest: null } });

describe('the folders and keys of a nightly schedule', () => {
  const logger = createLogger({ level: 'silent' });
  let prefix: string;
  let keys: Keys;
  let store: UsedDatabase;
  const env = (): Record<string, string> => ({ REDIS_URL, REALTY_PREFIX: prefix, LOG_LEVEL: 'silent', DATABASE_URL: store.url });
  let redis: Redis;
  let worker: DealWorker;
  let dir: string;

  const folders = async (name: string): Promise<TickData> => {
    const inbox = join(dir, name, 'in');
    const outbox = join(dir, name, 'out');
    await mkdir(inbox, { recursive: true });
    await mkdir(outbox, { recursive: true });
    return { name, inbox, outbox, profile: join(ROOT, 'samples/bank-profile.json') };
  };
  const tick = (data: TickData) => runTick(data, { redis, keys, db: store.db, logger, pollMs: 50 });
  const summaryOf = (data: TickData, name: string): FileSummary =>
    JSON.parse(readFileSync(join(data.outbox, `${name}.summary.json`), 'utf8')) as FileSummary;

  it.beforeAll(({ prefix: made, keys: madeKeys, db, redis: client, sandbox, dir: folder }) => {
    prefix = made;
    keys = madeKeys;
    store = db;
    redis = client;
    dir = folder;
    worker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: 's',
      concurrency: 10,
      attempts: 2,
      backoffMs: 50,
      timeoutMs: 2000,
      logger,
    });
  });
  // Before the harness closes the sandbox and the client and deletes the prefix.
  afterAll(async () => {
    await worker.close(1000);
  });

  it('keeps its own folders under .realty, so inputs named processed and failed are files like any other and never stop the files after them', async () => {
    const data = await folders('names');
    await drop(join(data.inbox, 'a.csv'), deals('A'));
    await drop(join(data.inbox, 'failed'), deals('F'));
    await drop(join(data.inbox, 'processed'), deals('P'));
    await drop(join(data.inbox, 'z.csv'), deals('Z'));
    const result = await tick(data);
    expect(result.files.map((f) => [f.file, f.status])).toEqual([
      ['a.csv', 'done'],
      ['failed', 'failed'],
      ['processed', 'failed'],
      ['z.csv', 'done'],
    ]);
    // A name without an extension cannot be read: that is its own failed summary, nothing more.
    expect(summaryOf(data, 'failed').error).toMatch(/Cannot tell the format/);
    expect(await readdir(data.inbox)).toEqual(['.realty']);
    expect((await readdir(join(data.inbox, '.realty', 'processed'))).sort()).toEqual(['a.csv', 'z.csv']);
    expect((await readdir(join(data.inbox, '.realty', 'failed'))).sort()).toEqual(['failed', 'processed']);
  });

  it('leaves the processed and failed folders of the old layout alone: their files are not inputs', async () => {
    const data = await folders('old-layout');
    await mkdir(join(data.inbox, 'processed'));
    await mkdir(join(data.inbox, 'failed'));
    await drop(join(data.inbox, 'processed', 'earlier.csv'), deals('E'));
    await drop(join(data.inbox, 'failed', 'broken.csv'), 'x\n');
    await drop(join(data.inbox, 'new.csv'), deals('N'));
    const result = await tick(data);
    expect(result.files.map((f) => [f.file, f.status])).toEqual([['new.csv', 'done']]);
    expect(await readdir(join(data.inbox, 'processed'))).toEqual(['earlier.csv']);
    expect(await readdir(join(data.inbox, 'failed'))).toEqual(['broken.csv']);
  });

  // Four runs of the command: seconds each on a busy host.
  it(
    'refuses an inbox and an outbox that are one folder, one inside the other, or one folder through a link: exit 2, one sentence',
    { timeout: 120_000 },
    async () => {
      const base = join(dir, 'apart');
      await mkdir(join(base, 'in', 'out'), { recursive: true });
      await symlink('in', join(base, 'alias'));
      const schedule = (inbox: string, outbox: string) =>
        runCli(
          [
            'schedule',
            '--inbox',
            inbox,
            '--outbox',
            outbox,
            '--profile',
            'samples/bank-profile.json',
            '--cron',
            '0 3 * * *',
            '--name',
            'apart',
          ],
          env(),
        );
      for (const [inbox, outbox] of [
        [join(base, 'in'), join(base, 'in')],
        [join(base, 'in'), join(base, 'in', 'out')],
        [join(base, 'in', 'out'), join(base, 'in')],
        [join(base, 'in'), join(base, 'alias')],
      ] as const) {
        const result = await schedule(inbox, outbox);
        expect(result.code).toBe(2);
        expect(result.stderr.trim().split('\n')).toHaveLength(1);
        expect(result.stderr).toMatch(/must be two separate folders, neither inside the other/);
      }
      expect(await listSchedules(redis, keys)).toEqual([]);
      // A schedule registered before this check is refused by its tick, before any file is read.
      await expect(
        tick({ name: 'apart', inbox: join(base, 'in'), outbox: join(base, 'alias'), profile: join(ROOT, 'samples/bank-profile.json') }),
      ).rejects.toThrow(/neither inside the other/);
    },
  );

  it("stores --ready-suffix, --settle-ms and the ledger's days in the schedule", async () => {
    const data = await folders('options');
    const result = await runCli(
      [
        'schedule',
        '--inbox',
        data.inbox,
        '--outbox',
        data.outbox,
        '--profile',
        'samples/bank-profile.json',
        '--cron',
        '0 3 * * *',
        '--name',
        'options',
        '--ready-suffix',
        '.ready',
        '--settle-ms',
        '5000',
      ],
      { ...env(), REALTY_LEDGER_DAYS: '500' },
    );
    expect(result.code).toBe(0);
    const [info] = await listSchedules(redis, keys);
    expect(info?.data).toMatchObject({ readySuffix: '.ready', settleMs: 5000, doneMs: 500 * DAY });
    expect((await runCli(['schedule', '--remove', '--name', 'options'], env())).code).toBe(0);
  });

  it('gives every key it writes an expiry (the lock goes, seen lasts a week) and remembers what ran in the database as long as the ledger', async () => {
    const data = { ...(await folders('keys')), doneMs: 5 * DAY };
    const text = deals('K');
    await drop(join(data.inbox, 'k.csv'), text);
    // A content that ran before, as the database remembers it: the same bytes under another name are a duplicate.
    const earlier = deals('L');
    await rememberDone(store.db, data.inbox, sha256(earlier), { file: 'l.csv', batch: 'l-1', at: '2026-01-01T00:00:00.000Z' }, DAY);
    await drop(join(data.inbox, 'l-again.csv'), earlier);
    const before = Date.now();
    const result = await tick(data);
    expect(result.files.map((f) => [f.file, f.status])).toEqual([
      ['k.csv', 'done'],
      ['l-again.csv', 'duplicate'],
    ]);
    expect(await redis.pttl(inboxKey(keys, data.inbox, 'lock'))).toBe(-2);
    const seen = await redis.pttl(inboxKey(keys, data.inbox, 'seen'));
    expect(seen).toBeGreaterThan(SEEN_MS - 60_000);
    expect(seen).toBeLessThanOrEqual(SEEN_MS);
    expect(await findDone(store.db, data.inbox, sha256(text))).toMatchObject({ file: 'k.csv' });
    const done = await store.db.kysely
      .selectFrom('inbox_files')
      .select('expires_at')
      .where('sha256', '=', sha256(text))
      .executeTakeFirstOrThrow();
    expect(Number(done.expires_at)).toBeGreaterThanOrEqual(before + 5 * DAY);
    expect(Number(done.expires_at)).toBeLessThanOrEqual(Date.now() + 5 * DAY);
    // Past that, forgotten: the ledger would not stop its deals either.
    expect(await findDone(store.db, data.inbox, sha256(text), Date.now() + 5 * DAY + 1000)).toBeUndefined();
    // Every key of this inbox has an expiry.
    const all = await redis.keys(`${inboxKey(keys, data.inbox, 'lock').replace(/:lock$/, '')}*`);
    for (const key of all) expect(await redis.pttl(key)).toBeGreaterThan(0);
    expect(existsSync(join(data.inbox, '.realty', 'processed', 'k.csv'))).toBe(true);
  });
});

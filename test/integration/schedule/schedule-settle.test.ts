import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, open, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { describe, expect, afterAll } from 'vitest';
import { defaultBatchId } from '../../../src/batch/batch-id.js';
import { createLogger } from '../../../src/logger.js';
import type { Keys } from '../../../src/redis/keys.js';
import { createXlsxFile } from '../../../src/files/xlsx-file.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import type { TickData } from '../../../src/schedule/scheduler.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import iconv from 'iconv-lite';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { batchRow } from '../../helpers/batch-rows.js';
import { waitFor } from '../../helpers/wait-for.js';

/** The first `n` sample deals (all of them end `queued`) under deal ids of their own. */
const deals = (tag: string, n: number): string => csvText(ROWS.slice(0, n).map((r) => [`${tag}-${r[0]}`, ...r.slice(1)]));
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

// One database for the file: a worker started by one test runs on into the next (each test's deals have a tag of their own).
const it = harness({ per: 'file', label: 'schedule-settle' });

describe('when a tick takes a file of the inbox', () => {
  let keys: Keys;
  let store: UsedDatabase;
  const logger = createLogger({ level: 'silent' });
  let sandbox: RunningSandbox;
  let redis: Redis;
  let dir: string;
  const workers: Array<{ deal: DealWorker; connection: Redis }> = [];

  const startWorker = (): void => {
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    workers.push({
      connection,
      deal: createDealWorker({
        processor: createDealProcessor,
        connection,
        keys,
        db: store.db,
        apiUrl: sandbox.url,
        sessionId: 's',
        concurrency: 10,
        attempts: 2,
        backoffMs: 50,
        timeoutMs: 2000,
        logger,
      }),
    });
  };
  const stopWorkers = async (): Promise<void> => {
    for (const w of workers.splice(0)) {
      await w.deal.close(1000);
      w.connection.disconnect();
    }
  };
  const folders = async (name: string): Promise<Omit<TickData, 'settleMs' | 'readySuffix'>> => {
    const inbox = join(dir, name, 'in');
    const outbox = join(dir, name, 'out');
    await mkdir(inbox, { recursive: true });
    await mkdir(outbox, { recursive: true });
    return { name, inbox, outbox, profile: join(ROOT, 'samples/bank-profile.json') };
  };
  const tick = (data: TickData) => runTick(data, { redis, keys, db: store.db, logger, pollMs: 50 });
  const POLL = { timeoutMs: 10_000, intervalMs: 20 };
  /** Docflows the sandbox created per deal of this tag: each deal at most once. */
  const docflowsPerDeal = (tag: string): number[] => {
    const counts = new Map<string, number>();
    for (const { requestId = '' } of sandbox.docflows())
      if (requestId.includes(`:${tag}-`)) counts.set(requestId, (counts.get(requestId) ?? 0) + 1);
    return [...counts.values()];
  };

  it.beforeAll(({ keys: made, db, sandbox: started, redis: client, dir: folder }) => {
    keys = made;
    store = db;
    sandbox = started;
    redis = client;
    dir = folder;
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(async () => {
    await stopWorkers();
  });

  it('takes a file only once its ready marker exists, never runs the marker, and removes the marker with its file', async () => {
    startWorker();
    const data = { ...(await folders('marker')), readySuffix: '.ready' };
    const file = join(data.inbox, 'bank-m.csv');
    await writeFile(file, deals('M', 3));
    // Untouched for a minute: without a marker convention it would be taken at once.
    const past = new Date(Date.now() - 60_000);
    await utimes(file, past, past);

    const before = await tick(data);
    expect(before.files).toEqual([]);
    expect(before.waiting).toEqual(['bank-m.csv']);

    await writeFile(`${file}.ready`, '');
    const after = await tick(data);
    expect(after.files).toMatchObject([{ file: 'bank-m.csv', status: 'done', rows: 3 }]);
    expect(after.waiting).toEqual([]);
    expect(await readdir(data.inbox)).toEqual(['.realty']);
    expect(await readdir(join(data.inbox, '.realty', 'processed'))).toEqual(['bank-m.csv']);
    expect(existsSync(join(data.outbox, 'bank-m.csv.ready.summary.json'))).toBe(false);
    // The private folder the outputs were written in is gone.
    expect((await readdir(data.outbox)).sort()).toEqual(['bank-m.csv.attention.csv', 'bank-m.csv.results.csv', 'bank-m.csv.summary.json']);
  });

  it('waits until a file stayed unchanged for --settle-ms, across a pause longer than two seconds', async () => {
    startWorker();
    const data = { ...(await folders('settle')), settleMs: 2600 };
    const file = join(data.inbox, 'bank-s.csv');
    const lines = deals('S', 6).split('\n');
    await writeFile(file, `${lines.slice(0, 3).join('\n')}\n`);
    // The writer pauses 2.2 s, then writes the rest.
    const rest = new Promise<void>((resolve) => setTimeout(() => void writeFile(file, `${lines.join('\n')}`).then(() => resolve()), 2200));

    const first = await tick(data);
    await rest;
    expect(first.files).toEqual([]);
    expect(first.waiting).toEqual(['bank-s.csv']);

    const second = await tick(data);
    expect(second.files).toMatchObject([{ file: 'bank-s.csv', status: 'done', rows: 6 }]);
    expect(docflowsPerDeal('S')).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('abandons the batch of a file that changed after it was loaded, leaves it in the inbox, and runs it whole later under a new batch, sending no deal twice', async () => {
    await stopWorkers();
    const data = { ...(await folders('growing')), settleMs: 500 };
    const file = join(data.inbox, 'bank-g.csv');
    const lines = deals('G', 6).split('\n');
    const head = `${lines.slice(0, 3).join('\n')}\n`;
    // A copy that keeps the file open and pauses longer than the settle time.
    const writer = await open(file, 'w');
    try {
      await writer.write(head);
      const past = new Date(Date.now() - 5000);
      await utimes(file, past, past);
      const firstBatch = defaultBatchId(file, sha256(head));

      // No worker yet: the tick loads two rows and waits for them; then the copy goes on.
      const running = tick(data);
      await waitFor(async () => (await batchRow(store.db, firstBatch))?.state === 'loaded', { ...POLL, what: 'the first load' });
      await writer.write(`${lines.slice(3).join('\n')}`);
      startWorker();
      const first = await running;
      expect(first.files).toMatchObject([{ file: 'bank-g.csv', status: 'stopped', batch: firstBatch, exitStatus: 1 }]);
      expect(first.files[0]!.error).toMatch(/changed after it was taken/);
      expect((await batchRow(store.db, firstBatch))?.state).toBe('failed');
      expect(existsSync(file)).toBe(true);
      expect(await readdir(join(data.inbox, '.realty', 'processed'))).toEqual([]);
      expect(existsSync(join(data.outbox, 'bank-g.csv.results.csv'))).toBe(false);
    } finally {
      await writer.close();
    }

    const second = await tick(data);
    expect(second.files).toMatchObject([{ file: 'bank-g.csv', status: 'done', rows: 6 }]);
    expect(second.files[0]!.batch).not.toBe(defaultBatchId(file, sha256(head)));
    const results = parse(readFileSync(join(data.outbox, 'bank-g.csv.results.csv')), { columns: true }) as Array<{
      outcome: string;
      docflowId: string;
    }>;
    expect(results).toHaveLength(6);
    // Rows the abandoned batch did send come back as already_submitted, with their docflow.
    for (const r of results) expect(['queued', 'already_submitted']).toContain(r.outcome);
    expect(results.every((r) => r.docflowId !== '')).toBe(true);
    expect(docflowsPerDeal('G')).toEqual([1, 1, 1, 1, 1, 1]);
    expect(sandbox.stats().requestIdsWithSeveralDocflows).toBe(0);
    expect(await readdir(join(data.inbox, '.realty', 'processed'))).toEqual(['bank-g.csv']);
  });

  it('notices a file changed while its batch waits, by its content, and gives the batch up before its rows are sent', async () => {
    await stopWorkers();
    const data = { ...(await folders('swapped')), settleMs: 200 };
    const file = join(data.inbox, 'bank-w.csv');
    const text = deals('W', 4);
    await writeFile(file, text);
    const past = new Date(Date.now() - 5000);
    await utimes(file, past, past);
    const batch = defaultBatchId(file, sha256(text));
    // No worker runs: without a look at the file while the batch waits, the tick would wait for ever.
    const running = tick(data);
    await waitFor(async () => (await batchRow(store.db, batch))?.state === 'loaded', { ...POLL, what: 'the load' });
    // Touched only: the same file, the wait goes on.
    const later = new Date(Date.now() + 1000);
    await utimes(file, later, later);
    // Then another file put in its place, as long as the first.
    await writeFile(file, text.replace(/W-/g, 'V-'));
    const first = await running;
    expect(first.files).toMatchObject([{ file: 'bank-w.csv', status: 'stopped', batch, exitStatus: 1 }]);
    expect(first.files[0]!.error).toMatch(/changed after it was taken/);
    expect((await batchRow(store.db, batch))?.state).toBe('failed');
    expect(docflowsPerDeal('W')).toEqual([]);
    expect(existsSync(file)).toBe(true);
  });

  it("reads each file as run would with the schedule's --mapping, --encoding and --delimiter (issue 40, point 8)", async () => {
    startWorker();
    const data: TickData = { ...(await folders('mapped')), settleMs: 0 };
    const header = HEADER.map((h) => (h === 'dealId' ? 'Номер сделки' : h));
    const rows = ROWS.slice(0, 3).map((r) => [`MAP-${r[0]}`, ...r.slice(1)]);
    const file = join(data.inbox, 'bank-m.csv');
    await writeFile(file, iconv.encode(csvText(rows, { header, delimiter: ';', eol: '\r\n' }), 'win1251'));
    const past = new Date(Date.now() - 5000);
    await utimes(file, past, past);
    const mapping = join(dir, 'mapped-map.json');
    await writeFile(mapping, JSON.stringify({ columns: { 'Номер сделки': 'dealId' } }));
    const done = await tick({ ...data, reading: { mapping, encoding: 'windows-1251', delimiter: ';' } });
    expect(done.files).toMatchObject([{ file: 'bank-m.csv', status: 'done', rows: 3 }]);
    const results = parse(readFileSync(join(data.outbox, 'bank-m.csv.results.csv')), { columns: true }) as Array<Record<string, string>>;
    expect(results.map((r) => [r.dealId, r.outcome])).toEqual(rows.map((r) => [r[0], 'queued']));
  });

  it('runs an Excel workbook dropped in the inbox as run would, its sheet read as the header and rows (issue 40, point 1)', async () => {
    startWorker();
    const data: TickData = { ...(await folders('workbook')), settleMs: 0 };
    const rows = ROWS.slice(0, 3).map((r) => [`XLS-${r[0]}`, ...r.slice(1)]);
    const file = join(data.inbox, 'bank-x.xlsx');
    const workbook = await createXlsxFile(
      file,
      HEADER.map((header) => ({ header })),
    );
    for (const row of rows) await workbook.write(row);
    await workbook.commit();
    const past = new Date(Date.now() - 5000);
    await utimes(file, past, past);
    const done = await tick(data);
    expect(done.files).toMatchObject([{ file: 'bank-x.xlsx', status: 'done', rows: 3 }]);
    const results = parse(readFileSync(join(data.outbox, 'bank-x.xlsx.results.csv')), { columns: true }) as Array<Record<string, string>>;
    expect(results.map((r) => [r.dealId, r.outcome])).toEqual(rows.map((r) => [r[0], 'queued']));
    expect(docflowsPerDeal('XLS')).toEqual([1, 1, 1]);
  });
});

import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue, UnrecoverableError, Worker } from 'bullmq';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import iconv from 'iconv-lite';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { LOADER } from '../../../src/config.js';
import { snilsCheckDigits } from '../../../src/input/checksums.js';
import type { BankProfile } from '../../../src/input/profile.js';
import { createLogger } from '../../../src/logger.js';
import type { DealJobData } from '../../../src/queue/job-data.js';
import { createKeys, type Keys } from '../../../src/redis/keys.js';
import { loadBatch, type LoadOptions } from '../../../src/batch/load-batch.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS, SAMPLE_INVALID, SAMPLE_READ, writeFixtures, type Fixture } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { waitFor } from '../../helpers/wait-for.js';
import { pauseDealQueue, waitingJobs } from '../../helpers/queue.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { batchRow, expireBatch } from '../../helpers/batch-rows.js';

const silent = createLogger({ level: 'silent' });

// The file's prefix, folder and Redis client (as BullMQ wants it); a database of each test's own.
const it = harness({ per: 'file', each: ['db'], label: 'load', redis: { maxRetriesPerRequest: null } });
// The command's: the file's prefix, a database and a folder of each test's own.
const command = harness({ per: 'file', each: ['db', 'dir'], label: 'load-cli' });

describe('loading the files banks really produce', () => {
  let prefix: string;
  let keys: Keys;
  let store: UsedDatabase;
  let redis: Redis;
  let dir: string;
  let profile: BankProfile;
  let fixtures: Fixture[];
  const load = (file: string, batch: string, extra: Partial<LoadOptions> = {}) =>
    loadBatch({ file, batch, profile, redis, keys, db: store.db, logger: silent, rejects: join(dir, `${batch}.rejects`), ...extra });
  const jobsOf = (batch: string): Promise<DealJobData[]> => waitingJobs(redis, keys, batch);

  it.beforeAll(async ({ prefix: made, keys: madeKeys, redis: client, dir: folder, profile: sample }) => {
    prefix = made;
    keys = madeKeys;
    redis = client;
    dir = folder;
    profile = await sample.load();
    fixtures = await writeFixtures(dir);
    // Nothing processes these jobs: the queue stays paused for the whole file.
    await pauseDealQueue(redis, keys);
  });
  it.beforeEach(({ db }) => {
    store = db;
  });

  it('reads every fixture shape to the same 24 rows: read = valid + invalid, Cyrillic intact', async () => {
    expect(fixtures.map((f) => f.name)).toHaveLength(7);
    for (const [i, fixture] of fixtures.entries()) {
      const batch = `shape-${i}`;
      const summary = await load(fixture.file, batch);
      expect({ name: fixture.name, read: summary.read, valid: summary.valid, invalid: summary.invalid }).toEqual({
        name: fixture.name,
        read: SAMPLE_READ,
        valid: SAMPLE_READ - SAMPLE_INVALID,
        invalid: SAMPLE_INVALID,
      });
      expect(summary.unknownColumns).toEqual([]);
      const jobs = await jobsOf(batch);
      expect(jobs).toHaveLength(SAMPLE_READ - SAMPLE_INVALID);
      const { dealId, field, value } = fixture.check!;
      expect(jobs.find((j) => j.dealId === dealId)?.deal?.[field]).toBe(value);
    }
  });

  it('detects Windows-1251 with ";" and CRLF, and UTF-8 BOM with tabs', async () => {
    const byName = (n: string) => fixtures.find((f) => f.name === n)!.file;
    const w = await load(byName('win1251-semicolon-crlf.csv'), 'detect-1251', { dryRun: true });
    expect([w.encoding, w.delimiter]).toEqual(['windows-1251', ';']);
    const b = await load(byName('utf8-bom-tab.csv'), 'detect-bom', { dryRun: true });
    expect([b.encoding, b.delimiter]).toEqual(['utf8-bom', '\t']);
  });

  it('keeps a quoted line break, quotes and delimiters inside a field', async () => {
    await load(fixtures.find((f) => f.name === 'quoted-breaks.csv')!.file, 'quoted');
    const jobs = await jobsOf('quoted');
    expect(jobs.find((j) => j.row === 1)?.deal?.owners[0]!.birthPlace).toBe('г. Новосибирск, "Ленинский" район\nвторая строка');
  });

  it('writes refused rows in the input encoding and delimiter, which load clean once fixed', async () => {
    const input = fixtures.find((f) => f.name === 'win1251-semicolon-crlf.csv')!.file;
    const rejectsFile = join(dir, 'refused.csv');
    const first = await load(input, 'rejects-1', { rejects: rejectsFile, dryRun: true });
    expect(first.rejectsFile).toBe(rejectsFile);

    const bytes = readFileSync(rejectsFile);
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes)).toThrow();
    const text = iconv.decode(bytes, 'win1251');
    expect(text).toContain('\r\n');
    const refused = parse(text, { delimiter: ';' }) as string[][];
    expect(refused[0]).toEqual(['row', 'errors', ...HEADER]);
    expect(refused.slice(1).map((r) => r[2])).toEqual(['NSK-2026-000127', 'SPB-2026-010079', 'MSK-2026-004511']);
    // Unchanged, after the row number (its place in the input) and the errors.
    for (const r of refused.slice(1)) expect(r.slice(2)).toEqual(ROWS[Number(r[0]) - 1]);
    expect(refused[1]![1]).toBe('ownerSnils: checksum does not match');

    // A clerk fixes the two broken rows in Excel and saves the same file.
    // The input's columns stand after the rejects file's row and errors.
    const col = (name: string) => HEADER.indexOf(name) + 2;
    const fixedRows = refused.map((r) => [...r]);
    fixedRows[1]![col('ownerSnils')] = `112-233-445${snilsCheckDigits('112233445')}`;
    fixedRows[2]![col('ownerBirthPlace')] = 'г. Санкт-Петербург';
    fixedRows[2]![col('ownerDocIssueDate')] = '28.02.2017';
    await writeFile(rejectsFile, iconv.encode(stringify(fixedRows, { delimiter: ';', record_delimiter: 'windows' }), 'win1251'));

    const again = await load(rejectsFile, 'rejects-2', { rejects: join(dir, 'refused-again.csv') });
    expect({ read: again.read, valid: again.valid, invalid: again.invalid, unknown: again.unknownColumns }).toEqual({
      read: 3,
      valid: 3,
      invalid: 0,
      unknown: [],
    });
    expect(again.rejectsFile).toBeUndefined();
  });

  it('writes refused JSON Lines records back as JSON Lines with an errors field', async () => {
    const rejectsFile = join(dir, 'refused.jsonl');
    await load(fixtures.find((f) => f.name === 'blank-line.jsonl')!.file, 'rejects-jsonl', { rejects: rejectsFile, dryRun: true });
    const lines = readFileSync(rejectsFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, string>);
    expect(lines.map((l) => l.dealId)).toEqual(['NSK-2026-000127', 'SPB-2026-010079', 'MSK-2026-004511']);
    expect(lines[2]!.errors).toBe('dealId: repeats the dealId of row 2, which is for another property');
  });

  it('enqueues no second job when the same file is loaded twice', async () => {
    const file = join(dir, 'plain.csv');
    await writeFile(file, csvText(ROWS));
    const first = await load(file, 'twice');
    const again = await load(file, 'twice');
    expect(first).toMatchObject({ enqueued: SAMPLE_READ - SAMPLE_INVALID, alreadyEnqueued: 0 });
    expect(again).toMatchObject({ enqueued: 0, alreadyEnqueued: SAMPLE_READ - SAMPLE_INVALID });
    expect(await jobsOf('twice')).toHaveLength(SAMPLE_READ - SAMPLE_INVALID);
  });

  it('resumes a load killed part-way without a second job for any deal', { timeout: 120_000 }, async () => {
    // 30,000 rows of the samples under new deal ids, loaded by the CLI and killed with SIGKILL once jobs appear.
    const big = join(dir, 'big.csv');
    const id = HEADER.indexOf('dealId');
    const rows = Array.from({ length: 30_000 }, (_, i) => {
      const r = [...ROWS[i % ROWS.length]!];
      r[id] = `GEN-${String(i).padStart(6, '0')}`;
      return r;
    });
    await writeFile(big, csvText(rows));
    // The test's database: the resumed load below finds what the killed one left in it.
    const env = { REDIS_URL, REALTY_PREFIX: prefix, LOG_LEVEL: 'silent', DATABASE_URL: store.url };
    const child = spawn(
      process.execPath,
      [CLI, 'load', big, '--profile', 'samples/bank-profile.json', '--batch', 'killed', '--rejects', join(dir, 'killed.rejects.csv')],
      { cwd: ROOT, env: childEnv(env), stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const jobKeys = () => redis.keys(`${keys.bullPrefix}:${keys.queueName}:killed.*`);
    try {
      // Every 10 ms: it is killed as soon as its first jobs are in. The command's start (Node, its
      // modules, opening and migrating its database) takes seconds, more on a busy host: up to 60 s.
      await waitFor(async () => (await jobKeys()).length !== 0, { timeoutMs: 60_000, intervalMs: 10, what: 'the first jobs of the load' });
    } finally {
      child.kill('SIGKILL');
    }
    await exited;
    const before = (await jobKeys()).length;
    expect(before).toBeGreaterThan(0);

    const resumed = await load(big, 'killed');
    expect(resumed.alreadyEnqueued).toBe(before);
    expect(resumed.enqueued + resumed.alreadyEnqueued).toBe(resumed.valid);
    expect(await jobsOf('killed')).toHaveLength(resumed.valid);
  });

  it('makes again the finished jobs an expired batch left behind, so that its rows run when it is loaded again', async ({ openPrefix }) => {
    const own = createKeys(openPrefix('load-stale'));
    const file = join(dir, 'stale.csv');
    await writeFile(file, csvText(ROWS));
    const loadOwn = () =>
      loadBatch({ file, batch: 'stale', profile, redis, keys: own, db: store.db, logger: silent, rejects: join(dir, 'stale.rejects') });
    expect(await loadOwn()).toMatchObject({ enqueued: SAMPLE_READ - SAMPLE_INVALID });
    // Every job ends (failed, kept 30 days by BullMQ) ...
    const worker = new Worker(own.queueName, () => Promise.reject(new UnrecoverableError('ended')), {
      connection: redis.duplicate(),
      prefix: own.bullPrefix,
    });
    const queue = new Queue<DealJobData>(own.queueName, { connection: redis, prefix: own.bullPrefix });
    // No deadline but the test's own (vitest.config.ts).
    await waitFor(async () => (await queue.getFailedCount()) >= SAMPLE_READ - SAMPLE_INVALID, {
      timeoutMs: 30_000,
      intervalMs: 20,
      what: 'every job failed',
    });
    await worker.close();
    // ... and the batch expires (30 days: its keys, its row and outcomes in the database) before BullMQ gets round to removing them.
    await redis.del(own.batch('stale'), own.rows('stale'));
    await expireBatch(store.db, 'stale');

    const again = await loadOwn();
    expect(again).toMatchObject({ enqueued: SAMPLE_READ - SAMPLE_INVALID, alreadyEnqueued: 0 });
    expect(await queue.getWaitingCount()).toBe(SAMPLE_READ - SAMPLE_INVALID);
    expect(await queue.getFailedCount()).toBe(0);
    await queue.close();
  });

  it("renames a bank's own headers with --mapping, fills defaults, and lists unknown columns once", async () => {
    const renamed = HEADER.map((h) => (h === 'dealId' ? 'Номер сделки' : h === 'cadastralNumber' ? 'Кадастровый номер' : h));
    const header = [...renamed, 'Менеджер'];
    const rows = ROWS.map((r) => [...r, 'Иванова']);
    const areaUnit = HEADER.indexOf('areaUnit');
    for (const r of rows) r[areaUnit] = '';
    const file = join(dir, 'mapped.csv');
    await writeFile(file, csvText(rows, { header }));
    const mappingFile = join(dir, 'map.json');
    await writeFile(
      mappingFile,
      JSON.stringify({ columns: { 'Номер сделки': 'dealId', ' кадастровый НОМЕР ': 'cadastralNumber' }, defaults: { areaUnit: 'кв.м' } }),
    );
    const { loadMapping } = await import('../../../src/input/mapping.js');
    const summary = await load(file, 'mapped', { mapping: await loadMapping(mappingFile) });
    expect(summary).toMatchObject({ read: SAMPLE_READ, valid: SAMPLE_READ - SAMPLE_INVALID, unknownColumns: ['Менеджер'] });
    const jobs = await jobsOf('mapped');
    expect(jobs.every((j) => j.deal?.areaUnit === 'кв.м')).toBe(true);
    expect(jobs.find((j) => j.dealId === 'MSK-2026-004511')?.deal?.cadastralNumber).toBe(ROWS[1]![HEADER.indexOf('cadastralNumber')]);
  });
});

describe('realty-batch load from the command line', () => {
  // No gateway: the load talks to none.
  const envOf = (prefix: string, store: UsedDatabase): Record<string, string> => ({
    REDIS_URL,
    REALTY_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    DATABASE_URL: store.url,
  });

  command(
    '--dry-run --json prints the summary as one JSON object, enqueues nothing and exits 3 for invalid rows',
    async ({ prefix, db: store, redis, dir }) => {
      const result = await runCli(
        [
          'load',
          'samples/deals.csv',
          '--profile',
          'samples/bank-profile.json',
          '--batch',
          'dry',
          '--dry-run',
          '--json',
          '--rejects',
          join(dir, 'r.csv'),
        ],
        envOf(prefix, store),
      );
      expect(result.code).toBe(3);
      const summary = JSON.parse(result.stdout) as Record<string, unknown>;
      expect(summary).toMatchObject({ read: 24, valid: 21, invalid: 3, enqueued: 0, alreadyEnqueued: 0, dryRun: true });
      const written = await redis.keys(`{${prefix}}*`);
      expect(written).toEqual([]);
      expect(await batchRow(store.db, 'dry')).toBeUndefined();
    },
  );

  command('stops before enqueueing anything when the profile is bad, listing every problem', async ({ prefix, db: store, redis, dir }) => {
    const bad = JSON.parse(readFileSync(join(ROOT, 'samples/bank-profile.json'), 'utf8')) as {
      organization: { inn: string };
      representative: { person: { snils: string } };
    };
    // The last digit is the checksum: one more makes it wrong.
    bad.organization.inn = bad.organization.inn.slice(0, 9) + String((Number(bad.organization.inn[9]) + 1) % 10);
    bad.representative.person.snils = '111-111-111 11';
    await writeFile(join(dir, 'bad.json'), JSON.stringify(bad));
    const result = await runCli(
      ['load', 'samples/deals.csv', '--profile', join(dir, 'bad.json'), '--batch', 'badprofile'],
      envOf(prefix, store),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('organization.inn');
    expect(result.stderr).toContain('representative.person.snils');
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const written = await redis.keys(`{${prefix}}:batch:badprofile*`);
    expect(written).toEqual([]);
    expect(await batchRow(store.db, 'badprofile')).toBeUndefined();
  });

  command(
    'reads a small input in its own thread, and one of LOADER.threadMinBytes or more in a reading thread beside the enqueueing',
    async ({ prefix, db: store, dir }) => {
      // Says on stderr each worker thread the command starts (the load's only one is its reading thread).
      const watch = [
        "import { createRequire, syncBuiltinESMExports } from 'node:module';",
        "const threads = createRequire(process.argv[1])('node:worker_threads');",
        'const Started = threads.Worker;',
        "threads.Worker = class extends Started { constructor(...args) { super(...args); process.stderr.write('a thread started\\n'); } };",
        'syncBuiltinESMExports();',
      ].join(' ');
      const load = (file: string, batch: string) =>
        new Promise<{ code: number | null; threads: number }>((resolve, reject) => {
          const child = spawn(
            process.execPath,
            [
              '--import',
              `data:text/javascript,${encodeURIComponent(watch)}`,
              CLI,
              'load',
              file,
              '--profile',
              'samples/bank-profile.json',
              '--batch',
              batch,
              '--rejects',
              join(dir, `${batch}.rejects.csv`),
            ],
            { cwd: ROOT, env: childEnv(envOf(prefix, store)), stdio: ['ignore', 'ignore', 'pipe'] },
          );
          let stderr = '';
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          child.once('error', reject);
          // 'close': the last of stderr may still be in the pipe at 'exit' (test/helpers/cli.ts).
          child.once('close', (code) => resolve({ code, threads: stderr.split('a thread started').length - 1 }));
        });
      // The samples: 24 rows, 12 KB.
      expect(await load('samples/deals.csv', 'small')).toEqual({ code: 3, threads: 0 });
      const id = HEADER.indexOf('dealId');
      const rows = Array.from({ length: 5_000 }, (_, i) => {
        const r = [...ROWS[i % ROWS.length]!];
        r[id] = `SIZE-${String(i).padStart(6, '0')}`;
        return r;
      });
      const large = join(dir, 'large.csv');
      await writeFile(large, csvText(rows));
      expect(statSync(large).size).toBeGreaterThanOrEqual(LOADER.threadMinBytes);
      expect(await load(large, 'large')).toEqual({ code: 3, threads: 1 });
    },
  );

  command('refuses an unknown --encoding as wrong usage (exit 2)', async ({ prefix, db: store }) => {
    const result = await runCli(
      ['load', 'samples/deals.csv', '--profile', 'samples/bank-profile.json', '--encoding', 'latin1', '--dry-run'],
      envOf(prefix, store),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/windows-1251/);
  });
});

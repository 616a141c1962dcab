import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect } from 'vitest';
import { createDealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { createLogger } from '../../../src/logger.js';
import { runCli } from '../../helpers/cli.js';
import { csvText, HEADER, records, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { batchRow } from '../../helpers/batch-rows.js';

const PROFILE = 'samples/bank-profile.json';
/** One CSV cell as csv-stringify writes it. */
const quoted = (cell: string): string =>
  csvText([[cell]], { header: [] })
    .replace(/^\n/, '')
    .replace(/\n$/, '');

// The file's prefix and folder, a database of each test's own; the load talks to no gateway.
const it = harness({ per: 'file', each: ['db'], label: 'edges' });
// Everything of the test's own: a worker (its Redis client as BullMQ wants it) against its sandbox.
const withWorkers = harness({ label: 'broken', redis: { maxRetriesPerRequest: null } });

describe('inputs that must not slip through or crash the loader', () => {
  let prefix: string;
  let store: UsedDatabase;
  let dir: string;
  const env = (): Record<string, string> => ({ REDIS_URL, REALTY_PREFIX: prefix, LOG_LEVEL: 'silent', DATABASE_URL: store.url });
  const load = (file: string, ...extra: string[]) =>
    runCli(['load', file, '--profile', PROFILE, '--rejects', join(dir, 'rejects.csv'), ...extra], env());

  it.beforeAll(({ prefix: made, dir: folder }) => {
    prefix = made;
    dir = folder;
  });
  it.beforeEach(({ db }) => {
    store = db;
  });

  it('refuses a UTF-8 file with one stray non-UTF-8 byte instead of reading it all as Windows-1251', async () => {
    const text = Buffer.from(csvText(ROWS), 'utf8');
    const at = text.indexOf(Buffer.from('Москва', 'utf8'));
    const file = join(dir, 'stray.csv');
    await writeFile(file, Buffer.concat([text.subarray(0, at), Buffer.from([0xa0]), text.subarray(at)]));
    const result = await load(file, '--dry-run');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/mixes UTF-8 text with bytes that are not UTF-8 \(near byte \d+\)/);
  });

  it('accepts a bare quote inside an unquoted field, as 1C writes it, and keeps it', async () => {
    const file = join(dir, 'bare-quote.csv');
    const issuer = HEADER.indexOf('ownerDocIssuerName');
    const line = ROWS[0]!.map((c, i) => (i === issuer ? 'ГУ МВД России "Главное" по Новосибирской области' : quoted(c))).join(',');
    await writeFile(file, `${HEADER.join(',')}\n${line}\n${csvText(ROWS.slice(1, 2), { header: [] }).replace(/^\n/, '')}`);
    const result = await load(file, '--dry-run', '--json');
    expect(JSON.parse(result.stdout)).toMatchObject({ read: 2, valid: 2 });
  });

  it('keeps every cell of a row wider than the header in the rejects file, after its row number and errors', async () => {
    const file = join(dir, 'wide.csv');
    const area = HEADER.indexOf('areaValue');
    // An unquoted `56,2` in areaValue: the row gets one cell more than the header.
    const cells = [...ROWS[1]!.slice(0, area), '56', '2', ...ROWS[1]!.slice(area + 1)];
    await writeFile(file, `${csvText(ROWS.slice(0, 1))}${cells.map(quoted).join(',')}\n`);
    const result = await load(file, '--dry-run', '--json');
    expect(JSON.parse(result.stdout)).toMatchObject({ read: 2, valid: 1, invalid: 1 });
    const [header, refused] = parse(readFileSync(join(dir, 'rejects.csv')), { relax_column_count: true }) as string[][];
    expect(header).toEqual(['row', 'errors', ...HEADER]);
    expect(refused!.slice(2)).toEqual(cells);
    expect(refused![0]).toBe('2');
    expect(refused![1]).toMatch(/^\(row\): has \d+ cells where the header has \d+/);
  });

  it('refuses a JSON number too long to keep its digits, naming the field', async () => {
    const file = join(dir, 'long-number.json');
    const [first] = records(ROWS.slice(0, 1));
    await writeFile(file, `[${JSON.stringify(first).replace(/"dealId":"[^"]*"/, '"dealId":9007199254740993')}]`);
    const result = await load(file, '--dry-run', '--json');
    expect(JSON.parse(result.stdout)).toMatchObject({ read: 1, invalid: 1 });
    expect(readFileSync(join(dir, 'rejects.csv'), 'utf8')).toContain('dealId: must be text: a number this long loses digits');
  });

  it('stops with one sentence, not a stack trace, when the rejects file cannot be written', async () => {
    const result = await runCli(['load', 'samples/deals.csv', '--profile', PROFILE, '--dry-run', '--rejects', '/dev/full'], env());
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^realty-batch: Could not write \/dev\/full \(no space left on device\)\.\n$/);
  });

  it('refuses a pipe instead of hanging on it', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const result = await load(fifo, '--dry-run');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('is not a regular file');
  });

  // Four runs of the command: seconds each on a busy host.
  it('puts the same file read with other options into another batch, and refuses them in the same one', { timeout: 120_000 }, async () => {
    const file = join(dir, 'options.csv');
    await writeFile(file, csvText(ROWS));
    const plain = JSON.parse((await load(file, '--dry-run', '--json')).stdout) as { batch: string };
    const forced = JSON.parse((await load(file, '--dry-run', '--json', '--encoding', 'utf8')).stdout) as { batch: string };
    expect(forced.batch).not.toBe(plain.batch);
    expect((await load(file, '--batch', 'same')).code).toBe(3);
    const again = await load(file, '--batch', 'same', '--delimiter', ',');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('Batch same holds other rows');
  });
});

describe('a load that cannot be read to its end, with workers running', () => {
  withWorkers(
    'sends nothing of it, leaves no job behind, and marks the batch failed',
    { timeout: 120_000 },
    async ({ prefix, keys, redis, db: store, sandbox, dir }) => {
      // 3,000 good rows under new ids, then a quote that never closes.
      const id = HEADER.indexOf('dealId');
      const rows = Array.from({ length: 3000 }, (_, i) => {
        const r = [...ROWS[1]!];
        r[id] = `BROKEN-${i}`;
        return r;
      });
      const file = join(dir, 'broken.csv');
      await writeFile(file, `${csvText(rows)}"never closed,${'x,'.repeat(10)}\n`);

      const worker = createDealWorker({
        processor: createDealProcessor,
        connection: redis,
        keys,
        db: store.db,
        apiUrl: sandbox.url,
        sessionId: 's',
        concurrency: 20,
        attempts: 2,
        backoffMs: 50,
        timeoutMs: 2000,
        logger: createLogger({ level: 'silent' }),
      });
      try {
        const result = await runCli(['load', file, '--profile', PROFILE, '--batch', 'broken', '--rejects', join(dir, 'r.csv')], {
          REDIS_URL,
          REALTY_PREFIX: prefix,
          LOG_LEVEL: 'silent',
          DATABASE_URL: store.url,
        });
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/cannot be read as CSV near line \d+/);
        // Give the workers time to have taken anything they could.
        await new Promise((r) => setTimeout(r, 500));
        expect(sandbox.stats().docflowCalls).toEqual({});
        const left = await redis.keys(`${keys.bullPrefix}:${keys.queueName}:broken.*`);
        expect(left.filter((k) => !k.endsWith(':logs'))).toEqual([]);
        expect((await batchRow(store.db, 'broken'))?.state).toBe('failed');
        const status = await runCli(['results', 'broken', '--out', join(dir, 'x.csv')], {
          REDIS_URL,
          REALTY_PREFIX: prefix,
          LOG_LEVEL: 'silent',
          DATABASE_URL: store.url,
        });
        expect(status.code).toBe(1);
        expect(status.stderr).toContain('did not load completely');
      } finally {
        await worker.close(1000);
      }
    },
  );
});

/**
 * `schedule add --type lift`: kept with the schedule and given to each tick's load, so a nightly
 * inbox of lifts files `cessation_encumbrance_request`s; an unknown type is refused when the
 * schedule is added, not at 3 a.m.
 */
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect } from 'vitest';
import { createDealProcessor } from '../../../jobs/deal.js';
import { createLogger } from '../../../src/logger.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import { listSchedules, type TickData } from '../../../src/schedule/scheduler.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';

const AGREEMENT = new Set(['agreementContentId', 'agreementSignatureIds', 'agreementFileType']);

const it = harness({ per: 'file', label: 'schedule-type' });

describe('a schedule with --type lift', () => {
  const logger = createLogger({ level: 'silent' });
  let connection: Redis;
  let worker: DealWorker;

  // The file's worker, on a connection of its own (BullMQ's blocking reads).
  it.beforeAll(({ sandbox, keys, db: store }) => {
    connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    worker = createDealWorker({
      processor: createDealProcessor,
      connection,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: 's',
      concurrency: 4,
      attempts: 2,
      backoffMs: 50,
      timeoutMs: 5000,
      logger,
    });
  });
  // Before the harness closes the sandbox and deletes the prefix the worker works on.
  afterAll(async () => {
    await worker.close(1000);
    connection.disconnect();
  });

  it(
    "files each tick's rows as the schedule's type, and refuses an unknown type when added",
    { timeout: 120_000 },
    async ({ dir, prefix, redis, keys, db: store, sandbox }) => {
      const inbox = join(dir, 'in');
      const outbox = join(dir, 'out');
      await mkdir(inbox, { recursive: true });
      await mkdir(outbox, { recursive: true });
      // A registration's row of the fixtures, its agreement columns left out, the mortgage's record added.
      const keep = HEADER.map((h, i) => [h, i] as const).filter(([h]) => !AGREEMENT.has(h));
      const row = ROWS.find((r) => r[0] === 'MSK-2026-004511')!;
      const file = join(inbox, 'lifts.csv');
      await writeFile(
        file,
        csvText([[...keep.map(([, i]) => row[i] ?? ''), '77-01/2025-7', '2025-06-30']], {
          header: [...keep.map(([h]) => h), 'recordNumber', 'recordDate'],
        }),
      );
      const past = new Date(Date.now() - 120_000);
      await utimes(file, past, past);

      const env = { REDIS_URL, REALTY_PREFIX: prefix, LOG_LEVEL: 'silent', DATABASE_URL: store.url };
      const add = (extra: string[]) =>
        runCli(
          ['schedule', 'add', '--inbox', inbox, '--outbox', outbox, '--profile', join(ROOT, 'samples/bank-profile.json')].concat([
            '--cron',
            '0 3 * * *',
            '--name',
            'lifts',
            ...extra,
          ]),
          env,
        );
      const unknown = await add(['--type', 'lease']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('--type "lease" is not a docflow type this version files');
      expect((await add(['--type', 'lift'])).code).toBe(0);
      const data = (await listSchedules(redis, keys)).find((s) => s.name === 'lifts')!.data! as TickData;
      expect(data.type).toBe('cessation_encumbrance_request');

      const [tick] = (await runTick(data, { redis, keys, db: store.db, logger, pollMs: 50 })).files;
      expect(tick, JSON.stringify(tick)).toMatchObject({ status: 'done', outcomes: { suspended: 1 } });
      expect(sandbox.docflows().map((d) => d.type)).toEqual(['cessation_encumbrance_request']);
      expect((await runCli(['schedule', 'remove', 'lifts'], env)).code).toBe(0);
    },
  );
});

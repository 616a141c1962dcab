/**
 * `schedule add --files-root <dir>`: kept with the schedule and given to each tick's load, as
 * `load --files-root` would be: a row naming its agreement by absolute path under the root is
 * sent (queued); the same file in a schedule without the option is refused at load (invalid).
 */
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, afterAll } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import { listSchedules, type TickData } from '../../../src/schedule/scheduler.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const SIGNATURE = TEST_SIGNATURE;
const FILE_HEADER = [...HEADER, 'agreementFile', 'agreementSignatureFiles'];

// One database for the file: the worker, started once, and both ticks share its ledger. One
// Redis client, as BullMQ's worker wants it, for the worker and the ticks.
const it = harness({
  per: 'file',
  label: 'schedule-files-root',
  sandbox: { sessions: ['s'], strictContents: true },
  redis: { maxRetriesPerRequest: null },
});

describe('a schedule with --files-root', () => {
  const logger = createLogger({ level: 'silent' });
  let worker: DealWorker;
  let dir: string;
  let docs: string;

  /** An inbox with one settled file whose row names `agreement` and its signature `<agreement>.sig` (absolute paths), and its outbox. */
  const inboxWith = async (name: string, dealId: string, agreement: string): Promise<TickData> => {
    const inbox = join(dir, name, 'in');
    const outbox = join(dir, name, 'out');
    await mkdir(inbox, { recursive: true });
    await mkdir(outbox, { recursive: true });
    const row = [...ROWS.find((r) => r[0] === 'MSK-2026-004511')!];
    row[0] = dealId;
    row[HEADER.indexOf('agreementContentId')] = '';
    row[HEADER.indexOf('agreementSignatureIds')] = '';
    const file = join(inbox, 'deals.csv');
    await writeFile(file, csvText([[...row, agreement, `${agreement}.sig`]], { header: FILE_HEADER }));
    const past = new Date(Date.now() - 120_000);
    await utimes(file, past, past);
    return { name, inbox, outbox, profile: join(ROOT, 'samples/bank-profile.json') };
  };

  it.beforeAll(async ({ sandbox, redis, keys, db: store, dir: folder }) => {
    worker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
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
    dir = folder;
    docs = join(dir, 'documents');
    await mkdir(docs);
    await writeFile(join(docs, 'agreement.pdf'), PDF);
    await writeFile(join(docs, 'agreement.pdf.sig'), SIGNATURE);
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(async () => {
    await worker.close(1000);
  });

  it(
    "keeps the root with the schedule and gives it to each tick's load: an absolute file under it is sent (queued); without it, invalid",
    { timeout: 120_000 },
    async ({ prefix, keys, redis, db: store, sandbox }) => {
      const agreement = join(docs, 'agreement.pdf');
      const env = { REDIS_URL, REALTY_PREFIX: prefix, LOG_LEVEL: 'silent', DATABASE_URL: store.url };
      const add = (data: TickData, extra: string[]) =>
        runCli(
          ['schedule', 'add', '--inbox', data.inbox, '--outbox', data.outbox, '--profile', data.profile, '--cron', '0 3 * * *'].concat([
            '--name',
            data.name,
            ...extra,
          ]),
          env,
        );
      const stored = async (name: string): Promise<TickData> => (await listSchedules(redis, keys)).find((s) => s.name === name)!.data!;

      const rooted = await inboxWith('rooted', 'FR-ROOTED', agreement);
      // Checked when the schedule is added, not at 3 a.m.
      const missing = await add(rooted, ['--files-root', join(dir, 'no-such-folder')]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--files-root');
      expect((await add(rooted, ['--files-root', docs])).code).toBe(0);
      expect((await stored('rooted')).filesRoot).toBe(docs);
      expect((await runCli(['schedule', 'list'], env)).stdout).toContain(`files-root ${docs}`);
      const [withRoot] = (await runTick(await stored('rooted'), { redis, keys, db: store.db, logger, pollMs: 50 })).files;
      expect(withRoot).toMatchObject({ status: 'done', outcomes: { queued: 1 } });

      const plain = await inboxWith('plain', 'FR-PLAIN', agreement);
      expect((await add(plain, [])).code).toBe(0);
      expect((await stored('plain')).filesRoot).toBeUndefined();
      const [without] = (await runTick(await stored('plain'), { redis, keys, db: store.db, logger, pollMs: 50 })).files;
      expect(without).toMatchObject({ status: 'done', outcomes: { invalid: 1 } });
      expect(sandbox.stats()).toMatchObject({ docflowsCreated: 1, contents: { uploads: 2 } });
      for (const name of ['rooted', 'plain']) expect((await runCli(['schedule', 'remove', name], env)).code).toBe(0);
    },
  );
});

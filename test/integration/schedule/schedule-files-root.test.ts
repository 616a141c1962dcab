/**
 * `schedule add --files-root <dir>`: kept with the schedule and given to each tick's load, as
 * `load --files-root` would be: a row naming its agreement by absolute path under the root is
 * sent (queued); the same file in a schedule without the option is refused at load (invalid).
 */
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createLogger } from '../../../src/logger.js';
import { createKeys } from '../../../src/redis/keys.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import { listSchedules, type TickData } from '../../../src/schedule/scheduler.js';
import { startSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { createDealWorker, type DealWorker } from '../../../src/worker/create-worker.js';
import { createDealProcessor } from '../../../jobs/deal.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { deletePrefix, REDIS_URL, uniquePrefix } from '../../helpers/redis.js';
import { useTestDatabase } from '../../helpers/test-db.js';
import { TEST_SIGNATURE } from '../../helpers/signatures.js';

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const SIGNATURE = TEST_SIGNATURE;
const FILE_HEADER = [...HEADER, 'agreementFile', 'agreementSignatureFiles'];

describe('a schedule with --files-root', () => {
  const prefix = uniquePrefix('schedule-files-root');
  const keys = createKeys(prefix);
  // One database for the file: the worker, started once, and both ticks share its ledger.
  const store = useTestDatabase({ per: 'file' });
  const logger = createLogger({ level: 'silent' });
  let sandbox: RunningSandbox;
  let redis: Redis;
  let connection: Redis;
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

  beforeAll(async () => {
    sandbox = await startSandbox({ sessions: ['s'], strictContents: true });
    redis = new Redis(REDIS_URL);
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
    dir = await mkdtemp(join(tmpdir(), 'realty-schedule-files-root-'));
    docs = join(dir, 'documents');
    await mkdir(docs);
    await writeFile(join(docs, 'agreement.pdf'), PDF);
    await writeFile(join(docs, 'agreement.pdf.sig'), SIGNATURE);
  });
  afterAll(async () => {
    await worker.close(1000);
    connection.disconnect();
    redis.disconnect();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
    await deletePrefix(prefix);
  });

  it(
    "keeps the root with the schedule and gives it to each tick's load: an absolute file under it is sent (queued); without it, invalid",
    { timeout: 120_000 },
    async () => {
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

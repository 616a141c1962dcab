/**
 * One ledger per deployment: a database is bound to the gateway (and account) of the first
 * command that talks to it, and a batch carries the id of the database it was loaded into, so a
 * worker started on another database (another folder's default, a wrong DATABASE_URL) leaves its
 * jobs alone instead of checking its deals against a ledger that never saw them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect } from 'vitest';
import { createDealProcessor } from '../../../jobs/deal.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { deploymentOf } from '../../../src/db/deployment.js';
import { createLogger } from '../../../src/logger.js';
import { dealJobId } from '../../../src/queue/job-data.js';
import { createDealWorker } from '../../../src/worker/create-worker.js';
import { openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { runCli } from '../../helpers/cli.js';
import { csvText, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { REDIS_URL } from '../../helpers/redis.js';
import { outcomeCount } from '../../helpers/outcomes.js';
import { waitFor } from '../../helpers/wait-for.js';

// The file's sandbox, folder and Redis client (as BullMQ's worker wants it); a database and a prefix for each test.
const it = harness({ per: 'file', each: ['db', 'prefix'], label: 'binding', redis: { maxRetriesPerRequest: null } });

describe('one ledger per deployment', () => {
  let elsewhere: TestDatabase | undefined;

  it.beforeAll(async ({ dir }) => {
    await writeFile(join(dir, 'deals.csv'), csvText(ROWS.slice(1, 3)));
  });
  afterEach(async () => {
    await elsewhere?.drop();
    elsewhere = undefined;
  });

  it('is bound to the gateway of its first run, and refuses a run configured for another in one sentence, sending nothing', async ({
    dir,
    sandbox,
    openSandbox,
    prefix,
    db: store,
  }) => {
    const other = await openSandbox({ sessions: ['s'] });
    const env = (url: string) => ({
      REDIS_URL,
      DATABASE_URL: store.url,
      REALTY_API_URL: url,
      REALTY_SESSION_ID: 's',
      REALTY_PREFIX: prefix,
      LOG_LEVEL: 'warn',
    });
    const args = (out: string) => ['run', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--out', join(dir, out)];
    const first = await runCli(args('first.csv'), env(sandbox.url));
    expect(first.code, first.stderr).toBe(0);
    expect((await deploymentOf(store.db, prefix)).gatewayUrl).toBe(sandbox.url);

    const wrong = await runCli(args('second.csv'), env(other.url));
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`is the ledger of the deployment on ${sandbox.url}, and this process is configured for ${other.url}`);
    expect(other.stats().docflowsCreated).toBe(0);
    expect(other.stats().suggestCalls).toBe(0);

    // load and retry talk to no gateway, but queue work for this configuration's workers: refused alike, nothing queued.
    const load = await runCli(
      ['load', join(dir, 'deals.csv'), '--profile', 'samples/bank-profile.json', '--batch', 'elsewhere'],
      env(other.url),
    );
    expect(load.code).toBe(1);
    expect(load.stderr).toContain(`is the ledger of the deployment on ${sandbox.url}, and this process is configured for ${other.url}`);
    expect(await store.db.kysely.selectFrom('batches').select('id').where('id', '=', 'elsewhere').executeTakeFirst()).toBeUndefined();
    const retry = await runCli(['retry', 'first'], env(other.url));
    expect(retry.code).toBe(1);
    expect(retry.stderr).toContain(`is the ledger of the deployment on ${sandbox.url}`);
  });

  it("leaves the jobs of a batch loaded into another database to that database's workers", async ({
    dir,
    sandbox,
    redis,
    keys,
    db: store,
    profile: sample,
  }) => {
    const profile = await sample.load();
    const logger = createLogger({ level: 'silent' });
    await loadBatch({ file: join(dir, 'deals.csv'), batch: 'b', profile, redis, keys, db: store.db, logger, rejects: join(dir, 'r.csv') });
    elsewhere = await openTestDatabase('sqlite');
    let logs = '';
    const stream = new PassThrough();
    stream.on('data', (d: Buffer) => (logs += d.toString()));
    const worker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: elsewhere.db,
      apiUrl: sandbox.url,
      sessionId: 's',
      concurrency: 2,
      attempts: 2,
      backoffMs: 50,
      timeoutMs: 2000,
      track: false,
      logger: createLogger({ level: 'error', destination: stream }),
    });
    const made = sandbox.stats().docflowsCreated;
    try {
      const ours = (await deploymentOf(store.db, keys.prefix)).databaseId;
      await waitFor(async () => logs.includes(`batch b was loaded into database ${ours}, not this worker's (DATABASE_URL)`), {
        timeoutMs: 20_000,
        intervalMs: 50,
        what: "the worker's refusal",
      });
      // Put back for later, never run: nothing sent, no outcome, nothing in the other ledger.
      const job = await worker.queue.getJob(dealJobId('b', ROWS[1]![0]!));
      expect(await job?.getState()).toBe('delayed');
      expect(sandbox.stats().docflowsCreated).toBe(made);
      expect([await outcomeCount(store.db, 'b'), await outcomeCount(elsewhere.db, 'b')]).toEqual([0, 0]);
      expect(await elsewhere.db.kysely.selectFrom('ledger').selectAll().execute()).toEqual([]);
    } finally {
      await worker.close();
    }
  });
});

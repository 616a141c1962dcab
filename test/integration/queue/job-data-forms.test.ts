/**
 * A waiting job's data as this version writes it (`row` and the deal as `c`, the batch and dealId
 * in the job's id only): each job is sent once with its whole deal, and a finished job keeps its
 * batch, row and dealId, never the deal's persons. Nothing was released before this form, so no
 * other form is read.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { createDealProcessor } from '../../../jobs/deal.js';
import { loadBatch } from '../../../src/batch/load-batch.js';
import { findWaitingRows } from '../../../src/batch/waiting-rows.js';
import type { Deal } from '../../../src/domain/deal.js';
import { loadProfile } from '../../../src/input/profile.js';
import { createDealValidator } from '../../../src/input/validate-deal.js';
import { createLogger } from '../../../src/logger.js';
import { dealJobId } from '../../../src/queue/job-data.js';
import type { Keys } from '../../../src/redis/keys.js';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
import { createDealWorker } from '../../../src/worker/create-worker.js';
import { ROOT } from '../../helpers/cli.js';
import { csvText, HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { waitFor } from '../../helpers/wait-for.js';
import { outcomeCount, storedOutcomes } from '../../helpers/outcomes.js';
import type { UsedDatabase } from '../../helpers/test-db.js';
import { ledgerRows } from '../../helpers/ledger-rows.js';
import { requestIdOf } from '../../../src/ledger/entry.js';

const SESSION = 'job-data-forms-session';
/** Rows 1 to 3 of the samples: two found through suggest, one with its cadastral number. */
const THREE = ROWS.slice(0, 3);
const dealOfRow = (cells: string[]): Deal => {
  const result = createDealValidator()(Object.fromEntries(HEADER.map((h, i) => [h, cells[i] ?? ''])));
  if (!result.ok) throw new Error(`sample row ${cells[0]} is valid`);
  return result.deal;
};

// The prefix, client, folder and sandbox once for the file; a database of each test's own.
const it = harness({
  per: 'file',
  each: ['db'],
  label: 'job-forms',
  sandbox: { sessions: [SESSION] },
  redis: { maxRetriesPerRequest: null },
});

describe('waiting jobs as this version writes them', () => {
  const silent = createLogger({ level: 'silent' });
  let keys: Keys;
  let store: UsedDatabase;
  let redis: Redis;
  let dir: string;
  let sandbox: RunningSandbox;

  it.beforeAll(({ keys: made, redis: client, dir: folder, sandbox: started }) => {
    keys = made;
    redis = client;
    dir = folder;
    sandbox = started;
  });
  it.beforeEach(({ db }) => {
    store = db;
  });

  it('sends each once with its whole deal, and leaves each finished job its batch, row and dealId', async () => {
    const file = join(dir, 'b.csv');
    await writeFile(file, csvText(THREE));
    const profile = await loadProfile(join(ROOT, 'samples/bank-profile.json'));
    expect(
      await loadBatch({ file, batch: 'b', profile, redis, keys, db: store.db, logger: silent, rejects: join(dir, 'b.rejects') }),
    ).toMatchObject({
      enqueued: 3,
    });
    const deals = THREE.map(dealOfRow);
    const jobKey = (deal: Deal) => `${keys.bullPrefix}:${keys.queueName}:${dealJobId('b', deal.dealId)}`;

    // As this version writes it: no batch, no dealId, the deal as `c`.
    const written = JSON.parse((await redis.hget(jobKey(deals[0]!), 'data'))!) as Record<string, unknown>;
    expect(Object.keys(written)).toEqual(['row', 'c']);
    expect(JSON.stringify(written)).not.toContain(deals[0]!.dealId);
    const worker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: sandbox.url,
      sessionId: SESSION,
      concurrency: 3,
      attempts: 3,
      backoffMs: 50,
      timeoutMs: 2000,
      track: false,
      logger: silent,
    });
    try {
      await waitFor(async () => (await outcomeCount(store.db, 'b')) === 3, {
        timeoutMs: 30_000,
        intervalMs: 20,
        what: 'three outcomes',
      });
    } finally {
      await worker.close(5000);
    }

    const outcomes = await storedOutcomes(store.db, 'b');
    expect(outcomes.map((o) => [o.row, o.dealId, o.outcome]).sort()).toEqual(deals.map((d, i) => [i + 1, d.dealId, 'queued']).sort());
    // One docflow a deal, each for its own property, read whole from the job (the Cyrillic street too).
    const docflows = sandbox.docflows();
    expect(docflows).toHaveLength(3);
    for (const deal of deals)
      expect(docflows.filter((d) => d.requestId === requestIdOf(profile.organization.inn, deal.dealId))).toHaveLength(1);
    // The ledger holds each deal once, submitted with its docflow.
    expect((await ledgerRows(store.db)).map((r) => [r.deal_id, r.state, r.docflow_id]).sort()).toEqual(
      deals
        .map((d) => [
          d.dealId,
          'submitted',
          docflows.find((f) => f.requestId === requestIdOf(profile.organization.inn, d.dealId))!.docflowId,
        ])
        .sort(),
    );
    for (const deal of deals) expect(JSON.stringify(docflows.map((d) => d.object))).toContain(deal.street!);

    for (const deal of deals) {
      const data = await redis.hget(jobKey(deal), 'data');
      // The job was removed (DEAL_JOBS_KEPT), or keeps its keys only: never the deal's persons.
      if (data === null) continue;
      expect(Object.keys(JSON.parse(data) as object).sort()).toEqual(['batch', 'dealId', 'row']);
      expect(data).not.toContain(deal.owners[0]!.surname);
    }
  });

  it('tells the dealId of a delayed job written without one, from its id', async () => {
    const deal = dealOfRow(ROWS[3]!);
    const id = dealJobId('w', deal.dealId);
    const delayedKey = `${keys.bullPrefix}:${keys.queueName}:delayed`;
    await redis.hset(`${keys.bullPrefix}:${keys.queueName}:${id}`, 'data', JSON.stringify({ row: 4, holds: 1 }), 'atm', '0');
    await redis.zadd(delayedKey, (Date.now() + 60_000) * 0x1000, id);
    const waiting = await findWaitingRows(redis, keys, 'w', 10);
    expect(waiting.rows).toEqual([expect.objectContaining({ row: 4, dealId: deal.dealId, attempts: 0 })]);
  });
});

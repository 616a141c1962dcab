/**
 * The nets under the processor's own masking: whatever a run throws reaches BullMQ masked,
 * a job BullMQ fails by itself is recorded masked, and a log line never shows an error's
 * cause (the gateway's unmasked text that a masked error wraps).
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { UnrecoverableError, type Job } from 'bullmq';
import { describe, expect, beforeAll } from 'vitest';
import { databaseText } from '../../helpers/ledger-rows.js';
import { createDealProcessor, type DealProcessorContext } from '../../../jobs/deal.js';
import { ApiHttpError } from '../../../src/errors.js';
import type { Deal } from '../../../src/domain/deal.js';
import { loadProfile, type BankProfile } from '../../../src/input/profile.js';
import { createDealValidator } from '../../../src/input/validate-deal.js';
import { createLogger } from '../../../src/logger.js';
import { createBatchStore } from '../../../src/batch/batch-store.js';
import type { OutcomeRecord } from '../../../src/domain/outcome.js';
import type { DealJobData } from '../../../src/queue/job-data.js';
import { createDealWorker } from '../../../src/worker/create-worker.js';
import { ROOT } from '../../helpers/cli.js';
import { HEADER, ROWS } from '../../helpers/fixtures.js';
import { harness } from '../../helpers/harness.js';
import { storedOutcome } from '../../helpers/outcomes.js';

/** Row 2 of the samples: Смирнова Ольга, SNILS 490-905-752 13, with its cadastral number. */
const validated = createDealValidator()(Object.fromEntries(HEADER.map((h, i) => [h, ROWS[1]![i] ?? ''])));
if (!validated.ok) throw new Error('the second sample row is valid');
const deal: Deal = validated.deal;
/** A message naming the owner and the bank's representative (samples/bank-profile.json). */
const NAMING = 'could not write СМИРНОВА (СНИЛС 490-905-752 13), representative Григорьева 45 07 318264';
const MASKED = 'could not write *** (СНИЛС ***), representative *** ***';

// A prefix, a Redis client (as BullMQ's worker wants it) and a database for the test that names them.
const it = harness({ label: 'pd-net', redis: { maxRetriesPerRequest: null } });

let profile: BankProfile;
beforeAll(async () => {
  profile = await loadProfile(join(ROOT, 'samples/bank-profile.json'));
});

const jobOf = (data: DealJobData, extra: Record<string, unknown> = {}): Job<DealJobData, OutcomeRecord> =>
  ({
    data,
    id: 'b.1',
    queueQualifiedName: '{x}:deals',
    attemptsMade: 0,
    attemptsStarted: 1,
    stalledCounter: 0,
    moveToDelayed: async () => undefined,
    ...extra,
  }) as unknown as Job<DealJobData, OutcomeRecord>;

describe('what reaches BullMQ and the log', () => {
  it('masks the persons of the row in any error a run lets through to BullMQ, and keeps its class', async () => {
    // Another row holds the deal: the run puts its job back, and writing the job's data fails
    // with a message that names the persons (a defect's, a library's: not the gateway's text).
    const ctx = {
      batches: { state: async () => 'loaded', profile: async () => profile },
      ledger: { claim: async () => ({ kind: 'wait', batch: 'other', row: 7 }) },
      updateJobData: async () => {
        throw new UnrecoverableError(NAMING);
      },
      apiUrl: 'http://127.0.0.1:9',
      attempts: 3,
      reconcileTimeoutMs: 60_000,
      timeoutMs: 30_000,
      logger: createLogger({ level: 'silent' }),
    } as unknown as DealProcessorContext;
    const processor = createDealProcessor(ctx);
    const thrown = await processor(jobOf({ batch: 'b', row: 1, dealId: deal.dealId, deal }), 'token').then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(thrown).toBeInstanceOf(UnrecoverableError);
    expect(thrown!.message).toBe(MASKED);
    expect(thrown!.stack).toContain(MASKED);
    expect(thrown!.stack).not.toMatch(/СМИРНОВА|490-905-752|318264|Григорьева/);
  });

  it("logs an error with its own message only, never its cause's gateway text or body", () => {
    const stream = new PassThrough();
    let line = '';
    stream.on('data', (d: Buffer) => (line += d.toString()));
    const cause = new ApiHttpError({ status: 400, endpoint: 'docflows', body: { code: 'badSnils49090575213', message: 'СМИРНОВА' } });
    createLogger({ level: 'debug', destination: stream }).error(
      { err: new Error('400: badSnils***: ***', { cause }) },
      'a line with an error',
    );
    expect(JSON.parse(line).err).toMatchObject({ type: 'Error', message: '400: badSnils***: ***' });
    expect(line).not.toMatch(/СМИРНОВА|49090575213/);
  });
});

describe('the net under the processor (a job BullMQ failed by itself)', () => {
  it('records its failure with the persons of the row masked', async ({ redis, keys, db: store }) => {
    await createBatchStore(redis, keys, store.db).open({ id: 'b', file: 'deals.csv', fingerprint: 'f' }, profile);
    const worker = createDealWorker({
      processor: createDealProcessor,
      connection: redis,
      keys,
      db: store.db,
      apiUrl: 'http://127.0.0.1:9',
      sessionId: 's',
      concurrency: 1,
      attempts: 1,
      backoffMs: 50,
      timeoutMs: 1000,
      track: false,
      logger: createLogger({ level: 'silent' }),
    });
    const job = jobOf(
      { batch: 'b', row: 1, dealId: deal.dealId, deal },
      { finishedOn: Date.now(), attemptsMade: 1, queueQualifiedName: `${keys.bullPrefix}:deals` },
    );
    worker.worker.emit('failed', job, new Error(NAMING), 'active');
    await worker.close(1000);
    const record = await storedOutcome(store.db, 'b', 1);
    expect(record).toMatchObject({ outcome: 'failed', errorCode: 'ERR_JOB_FAILED', errorMessage: MASKED });
    // Nor does the database (the ledger, kept for years; the outcome itself) hold any of them.
    const { tables, text } = await databaseText(store.db);
    expect(tables).toEqual(
      expect.arrayContaining(['batches', 'deployment', 'docflow_history', 'docflows', 'feed', 'ledger', 'operator_actions', 'outcomes']),
    );
    expect(text).toContain('ERR_JOB_FAILED');
    expect(text).not.toMatch(/СМИРНОВА|Смирнова|490-905-752|49090575213|318264|Григорьева/i);
  });
});

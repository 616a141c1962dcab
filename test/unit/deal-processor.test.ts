/**
 * The deal processor's paths, each through createDealProcessor with a fake context: fake
 * gateway client, fake stores, a fake Job whose moveToDelayed and moveToWait are spies. No
 * Redis, no network: what each path decides, and what it leaves undone.
 */
import { join } from 'node:path';
import { DelayedError, UnrecoverableError, WaitingError, type Job } from 'bullmq';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createDealProcessor, type DealProcessorContext } from '../../jobs/deal.js';
import { ApiHttpError } from '../../src/errors.js';
import { BatchAbandonedError } from '../../src/queue/batch-abandoned.js';
import type { Deal } from '../../src/domain/deal.js';
import { loadProfile, type BankProfile } from '../../src/input/profile.js';
import { storedProperty } from '../../src/input/property-key.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import type { ClaimVerdict, Lookup } from '../../src/ledger/ledger.js';
import { createLogger } from '../../src/logger.js';
import type { RecordOptions, RecordResult } from '../../src/outcomes/store.js';
import type { OutcomeRecord } from '../../src/domain/outcome.js';
import type { DealJobData } from '../../src/queue/job-data.js';
import { claimRecheckMs, loadingRecheckMs } from '../../src/worker/deal/steps.js';
import { ROOT } from '../helpers/cli.js';
import { HEADER, ROWS } from '../helpers/fixtures.js';

/** A sample deal with its cadastral number (no suggest call needed) and one found through suggest. */
const WITH_NUMBER = 'MSK-2026-004511';
const BY_SUGGEST = 'NSK-2026-000123';
const REQUEST_ID = '7700000000:0:MSK-2026-004511';

function dealOf(dealId: string): Deal {
  const row = ROWS.find((r) => r[0] === dealId)!;
  const validated = createDealValidator()(Object.fromEntries(HEADER.map((h, i) => [h, row[i] ?? ''])));
  if (!validated.ok) throw new Error(`sample ${dealId} is valid`);
  return validated.deal;
}

let profile: BankProfile;
beforeAll(async () => {
  profile = await loadProfile(join(ROOT, 'samples/bank-profile.json'));
});

interface Fakes {
  ctx: DealProcessorContext;
  recorded: Array<{ record: OutcomeRecord; options: RecordOptions | undefined }>;
  state: ReturnType<typeof vi.fn>;
  range: ReturnType<typeof vi.fn>;
  record: ReturnType<typeof vi.fn>;
  claim: ReturnType<typeof vi.fn>;
  settle: ReturnType<typeof vi.fn>;
  lookup: ReturnType<typeof vi.fn>;
  suggest: ReturnType<typeof vi.fn>;
  createDocflow: ReturnType<typeof vi.fn>;
  updateJobData: ReturnType<typeof vi.fn>;
  pauseForSession: ReturnType<typeof vi.fn>;
}

interface FakeOptions {
  state?: 'loading' | 'loaded' | 'failed';
  earlier?: OutcomeRecord;
  verdict?: ClaimVerdict;
  created?: () => Promise<unknown>;
  holdUntil?: number;
  attempts?: number;
  writes?: RecordResult[];
}

function fakes(o: FakeOptions = {}): Fakes {
  const recorded: Fakes['recorded'] = [];
  const writes = [...(o.writes ?? [])];
  const f = {
    recorded,
    state: vi.fn(async () => o.state ?? 'loaded'),
    range: vi.fn(async () => [o.earlier]),
    record: vi.fn(async (_batch: string, record: OutcomeRecord, options?: RecordOptions): Promise<RecordResult> => {
      recorded.push({ record: structuredClone(record), options });
      return writes.shift() ?? { kind: 'written' };
    }),
    claim: vi.fn(async (): Promise<ClaimVerdict> => o.verdict ?? { kind: 'send', requestId: REQUEST_ID }),
    settle: vi.fn(async () => undefined),
    lookup: vi.fn(async (): Promise<Lookup> => ({ earlier: undefined, cadastralNumber: undefined, entry: undefined })),
    suggest: vi.fn(async () => []),
    createDocflow: vi.fn(o.created ?? (async () => ({ status: 200, docflow: { docflowId: 'DF-1' } }))),
    updateJobData: vi.fn(async () => true),
    pauseForSession: vi.fn(async () => undefined),
  };
  const ctx = {
    client: { suggest: f.suggest, createDocflow: f.createDocflow },
    outcomes: { record: f.record, range: f.range },
    ledger: { claim: f.claim, settle: f.settle, lookup: f.lookup, checkpoint: vi.fn(async () => undefined) },
    batches: { state: f.state, profile: async () => profile },
    ensureFeed: async () => undefined,
    apiUrl: 'http://gateway.test',
    attempts: o.attempts ?? 3,
    reconcileTimeoutMs: 60_000,
    timeoutMs: 30_000,
    updateJobData: f.updateJobData,
    logger: createLogger({ level: 'silent' }),
    pauseForSession: f.pauseForSession,
    holdUntil: () => o.holdUntil ?? 0,
  } as unknown as DealProcessorContext;
  return { ctx, ...f };
}

type FakeJob = Job<DealJobData, OutcomeRecord> & { moveToDelayed: ReturnType<typeof vi.fn>; moveToWait: ReturnType<typeof vi.fn> };

function jobOf(data: Partial<DealJobData> & { deal?: Deal | undefined }, extra: Record<string, unknown> = {}): FakeJob {
  return {
    data: { batch: 'b', row: 1, dealId: WITH_NUMBER, ...data },
    id: 'b.1',
    queueQualifiedName: '{x}:deals',
    attemptsMade: 0,
    attemptsStarted: 1,
    stalledCounter: 0,
    moveToDelayed: vi.fn(async () => undefined),
    moveToWait: vi.fn(async () => undefined),
    ...extra,
  } as unknown as FakeJob;
}

/** Runs the processor once; its result, or what it threw. */
async function runOnce(f: Fakes, job: FakeJob): Promise<{ result?: OutcomeRecord; thrown?: Error }> {
  try {
    return { result: await createDealProcessor(f.ctx)(job, 'token') };
  } catch (err) {
    return { thrown: err as Error };
  }
}

/** When moveToDelayed was asked to bring the job back, in ms from now. */
const delayOf = (job: FakeJob, before: number): number => (job.moveToDelayed.mock.calls[0]![0] as number) - before;

describe('a deal job of a batch that is not loaded', () => {
  it('puts a job of a batch still loading back for loadingRecheckMs, without a try spent or anything sent', async () => {
    const f = fakes({ state: 'loading' });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) }, { attemptsStarted: 3 });
    const before = Date.now();
    const { thrown } = await runOnce(f, job);
    expect(thrown).toBeInstanceOf(DelayedError);
    expect(job.moveToDelayed).toHaveBeenCalledWith(expect.any(Number), 'token');
    expect(delayOf(job, before)).toBeGreaterThanOrEqual(8000);
    expect(delayOf(job, Date.now())).toBeLessThanOrEqual(8000);
    expect(f.claim).not.toHaveBeenCalled();
    expect(f.createDocflow).not.toHaveBeenCalled();
    expect(f.record).not.toHaveBeenCalled();
    expect(job.data.deal).toBeDefined();
  });

  it('looks again after 2 s, doubling per look, never later than 5 minutes', () => {
    expect([1, 2, 3, 9, 50].map(loadingRecheckMs)).toEqual([2000, 4000, 8000, 300_000, 300_000]);
  });

  it('remembers a loaded batch: its state is read once for many jobs', async () => {
    const f = fakes();
    const processor = createDealProcessor(f.ctx);
    await processor(jobOf({ deal: dealOf(WITH_NUMBER) }), 'token');
    await processor(jobOf({ row: 2, deal: dealOf(WITH_NUMBER) }), 'token');
    expect(f.state).toHaveBeenCalledTimes(1);
  });

  it('drops a job of a batch whose load failed: BatchAbandonedError, no outcome, its deal out of the job', async () => {
    const f = fakes({ state: 'failed' });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) });
    const { thrown } = await runOnce(f, job);
    expect(thrown).toBeInstanceOf(BatchAbandonedError);
    expect(thrown).toBeInstanceOf(UnrecoverableError);
    expect(thrown!.name).toBe('BatchAbandonedError');
    expect(f.record).not.toHaveBeenCalled();
    expect(f.claim).not.toHaveBeenCalled();
    expect(f.updateJobData).toHaveBeenCalledWith(job, 'token', { batch: 'b', row: 1, dealId: WITH_NUMBER });
    expect(job.data).not.toHaveProperty('deal');
  });
});

describe('a deal job run again without its deal', () => {
  it('records failed ERR_DATA_REMOVED when its row has no outcome, and fails the job for good', async () => {
    const f = fakes();
    const { thrown } = await runOnce(f, jobOf({}));
    expect(f.range).toHaveBeenCalledWith('b', 1, 1);
    expect(f.recorded).toHaveLength(1);
    expect(f.recorded[0]!.record).toMatchObject({
      row: 1,
      dealId: WITH_NUMBER,
      outcome: 'failed',
      errorCode: 'ERR_DATA_REMOVED',
      attempts: 1,
    });
    expect(f.recorded[0]!.record.errorMessage).toContain('realty-batch retry b');
    // Nothing of the deal's ledger entry: the run knows no bank.
    expect(f.recorded[0]!.options?.ledger).toBeUndefined();
    expect(thrown).toBeInstanceOf(UnrecoverableError);
    expect(thrown!.message).toBe(f.recorded[0]!.record.errorMessage);
    expect(f.claim).not.toHaveBeenCalled();
  });

  it('completes again with the outcome its row has, without a new one (a completed job retried from Bull Board)', async () => {
    for (const earlier of [
      { row: 1, dealId: WITH_NUMBER, outcome: 'queued', docflowId: 'DF-0', attempts: 1, finishedAt: '2026-01-01T00:00:00.000Z' },
      { row: 1, dealId: WITH_NUMBER, outcome: 'not_found', errorCode: 'NOT_FOUND', attempts: 1, finishedAt: '2026-01-01T00:00:00.000Z' },
    ] satisfies OutcomeRecord[]) {
      const f = fakes({ earlier });
      const { thrown, result } = await runOnce(f, jobOf({}));
      expect(thrown).toBeUndefined();
      expect(result).toEqual(earlier);
      expect(f.record).not.toHaveBeenCalled();
      expect(f.updateJobData).not.toHaveBeenCalled();
      expect(f.claim).not.toHaveBeenCalled();
    }
  });

  it('fails the job for good without a new outcome when its row has a failure of the machinery (a failed job retried from Bull Board)', async () => {
    const earlier: OutcomeRecord = {
      row: 1,
      dealId: WITH_NUMBER,
      outcome: 'failed',
      errorCode: 'ERR_JOB_STALLED',
      errorMessage: 'its worker stopped 6 times while it ran',
      attempts: 1,
      finishedAt: '2026-01-01T00:00:00.000Z',
    };
    const f = fakes({ earlier });
    const { thrown, result } = await runOnce(f, jobOf({}));
    expect(result).toBeUndefined();
    expect(thrown).toBeInstanceOf(UnrecoverableError);
    expect(thrown!.message).toMatch(/deal data was removed.*realty-batch retry b/);
    expect(f.record).not.toHaveBeenCalled();
    expect(f.claim).not.toHaveBeenCalled();
  });
});

describe('a deal job whose gateway call fails', () => {
  const http = (status: number) => async () => {
    throw new ApiHttpError({ status, endpoint: 'docflows' });
  };

  it('holds while the breaker is open: delayed until its cool-down, holds + 1, no try spent and no outcome', async () => {
    const openUntil = Date.now() + 5000;
    const f = fakes({ created: http(503), holdUntil: openUntil });
    const job = jobOf({ deal: dealOf(WITH_NUMBER), holds: 1 });
    const { thrown } = await runOnce(f, job);
    expect(thrown).toBeInstanceOf(DelayedError);
    expect(f.updateJobData).toHaveBeenCalledWith(job, 'token', expect.objectContaining({ holds: 2 }));
    expect(job.data.holds).toBe(2);
    const at = job.moveToDelayed.mock.calls[0]![0] as number;
    expect(at).toBeGreaterThanOrEqual(openUntil);
    expect(at).toBeLessThanOrEqual(openUntil + 1000);
    expect(f.record).not.toHaveBeenCalled();
    // A 503 may have made a docflow: the try's end is noted as such before the hold.
    expect(f.settle).toHaveBeenCalledWith(profile.organization.inn, WITH_NUMBER, REQUEST_ID, 'b', 1, expect.any(String), 'uncertain');
  });

  it('stops holding once it held as many times as it has tries: the try is spent', async () => {
    const f = fakes({ created: http(503), holdUntil: Date.now() + 5000, attempts: 3 });
    const job = jobOf({ deal: dealOf(WITH_NUMBER), holds: 3 });
    const { thrown } = await runOnce(f, job);
    expect(thrown).not.toBeInstanceOf(DelayedError);
    expect(thrown).not.toBeInstanceOf(UnrecoverableError);
    expect(job.moveToDelayed).not.toHaveBeenCalled();
  });

  it('pauses every worker on a 401 and puts the job back to waiting, unspent and without an outcome', async () => {
    const f = fakes({ created: http(401) });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) });
    const { thrown } = await runOnce(f, job);
    expect(f.pauseForSession).toHaveBeenCalledTimes(1);
    expect(job.moveToWait).toHaveBeenCalledWith('token');
    expect(thrown).toBeInstanceOf(WaitingError);
    expect(f.pauseForSession.mock.invocationCallOrder[0]!).toBeLessThan(job.moveToWait.mock.invocationCallOrder[0]!);
    expect(f.record).not.toHaveBeenCalled();
  });

  it('retries a 501 with a plain Error that keeps its cause while tries remain', async () => {
    const f = fakes({ created: http(501), attempts: 3 });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) }, { attemptsMade: 1 });
    const { thrown } = await runOnce(f, job);
    expect(thrown!.constructor).toBe(Error);
    expect(thrown!.cause).toBeInstanceOf(ApiHttpError);
    expect((thrown!.cause as ApiHttpError).status).toBe(501);
    expect(thrown!.message).toContain('501');
    expect(f.record).not.toHaveBeenCalled();
    expect(job.moveToDelayed).not.toHaveBeenCalled();
    // A 501 made nothing: the try ends definite, and the next may send again at once.
    expect(f.settle).toHaveBeenCalledWith(profile.organization.inn, WITH_NUMBER, REQUEST_ID, 'b', 1, expect.any(String), 'definite');
  });

  it('records unavailable on the last try of a 501 and completes the job with it', async () => {
    const f = fakes({ created: http(501), attempts: 3 });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) }, { attemptsMade: 2 });
    const { thrown, result } = await runOnce(f, job);
    expect(f.recorded).toHaveLength(1);
    expect(f.recorded[0]!.record).toMatchObject({ outcome: 'unavailable', httpStatus: 501, errorCode: 'HTTP_501', attempts: 3 });
    expect(f.recorded[0]!.options?.ledger).toMatchObject({ bank: profile.organization.inn, resubmit: false });
    expect(thrown).toBeUndefined();
    expect(result).toEqual(f.recorded[0]!.record);
  });

  it('records failed ERR_INTERNAL when an error of our own side outlasts the tries, and fails the job for good', async () => {
    const f = fakes({ attempts: 2 });
    f.claim.mockRejectedValue(new Error("READONLY You can't write against a read only replica."));
    const job = jobOf({ deal: dealOf(WITH_NUMBER) }, { attemptsMade: 1 });
    const { thrown, result } = await runOnce(f, job);
    expect(f.recorded).toHaveLength(1);
    expect(f.recorded[0]!.record).toMatchObject({ outcome: 'failed', errorCode: 'ERR_INTERNAL', attempts: 2 });
    expect(result).toBeUndefined();
    expect(thrown).toBeInstanceOf(UnrecoverableError);
    expect(thrown!.message).toMatch(/^READONLY/);
    expect(f.createDocflow).not.toHaveBeenCalled();
  });

  it('asks the news feed before the row ends when the last try may have made a docflow', async () => {
    const f = fakes({ created: http(503), attempts: 2 });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) }, { attemptsMade: 1 });
    const { thrown } = await runOnce(f, job);
    expect(thrown).toBeInstanceOf(DelayedError);
    expect(job.data.exhausted).toMatchObject({ outcome: 'failed', httpStatus: 503, errorCode: 'HTTP_503' });
    expect(f.record).not.toHaveBeenCalled();
  });
});

describe("a deal job and the ledger's claim", () => {
  it('sends a deal with its cadastral number, completes queued, and strips its deal in the same write', async () => {
    const f = fakes();
    const job = jobOf({ deal: dealOf(WITH_NUMBER) });
    const { result } = await runOnce(f, job);
    expect(result).toMatchObject({
      outcome: 'queued',
      docflowId: 'DF-1',
      httpStatus: 200,
      cadastralNumber: dealOf(WITH_NUMBER).cadastralNumber,
    });
    expect(f.createDocflow.mock.calls[0]![1]).toMatchObject({ requestId: REQUEST_ID });
    expect(f.recorded).toHaveLength(1);
    expect(f.recorded[0]!.options).toMatchObject({
      ledger: { bank: profile.organization.inn, requestId: REQUEST_ID, via: 'answer' },
      job: { key: '{x}:deals:b.1' },
    });
    expect(JSON.parse(f.recorded[0]!.options!.job!.data)).not.toHaveProperty('deal');
    expect(job.data).not.toHaveProperty('deal');
    expect(f.updateJobData).not.toHaveBeenCalled();
    expect(f.lookup).not.toHaveBeenCalled();
  });

  it('waits for another row that holds the deal: delayed about 2 s with waits + 1, nothing sent', async () => {
    const f = fakes({ verdict: { kind: 'wait', batch: 'other', row: 7 } });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) });
    const before = Date.now();
    const { thrown } = await runOnce(f, job);
    expect(thrown).toBeInstanceOf(DelayedError);
    expect(job.data.waits).toBe(1);
    expect(delayOf(job, before)).toBeGreaterThanOrEqual(1800);
    expect(delayOf(job, before)).toBeLessThanOrEqual(2300);
    expect(f.createDocflow).not.toHaveBeenCalled();
    expect(f.record).not.toHaveBeenCalled();
    expect(claimRecheckMs(9)).toBeLessThanOrEqual(66_000);
  });

  it("records already_submitted when another row made the deal's docflow, and completes the job with it", async () => {
    const f = fakes({
      verdict: { kind: 'elsewhere', deal: { docflowId: 'DF-9', outcome: 'suspended', batch: 'a', row: 4, at: '2026-01-01T00:00:00.000Z' } },
    });
    const { result } = await runOnce(f, jobOf({ deal: dealOf(WITH_NUMBER) }));
    expect(result).toMatchObject({ outcome: 'already_submitted', docflowId: 'DF-9' });
    expect(result!.errorMessage).toContain('batch a, row 4');
    expect(f.recorded[0]!.options?.ledger).toBeUndefined();
    expect(f.createDocflow).not.toHaveBeenCalled();
  });

  it('records its own docflow again when the ledger says this row made it, noting how it became known', async () => {
    const f = fakes({ verdict: { kind: 'own', docflowId: 'DF-7', outcome: 'queued', at: '2026-01-01T00:00:00.000Z', via: 'feed' } });
    const { result } = await runOnce(f, jobOf({ deal: dealOf(WITH_NUMBER) }));
    expect(result).toMatchObject({ outcome: 'queued', docflowId: 'DF-7', httpStatus: 200 });
    expect(result!.errorMessage).toContain('news feed');
    expect(f.recorded[0]!.options?.ledger).toMatchObject({ bank: profile.organization.inn, via: 'feed' });
    expect(f.createDocflow).not.toHaveBeenCalled();
  });

  it('completes with the outcome the row already has, and takes its deal out of the job', async () => {
    const record: OutcomeRecord = {
      row: 1,
      dealId: WITH_NUMBER,
      outcome: 'queued',
      docflowId: 'DF-3',
      attempts: 1,
      finishedAt: '2026-01-01T00:00:00.000Z',
    };
    const f = fakes({ verdict: { kind: 'done', record } });
    const job = jobOf({ deal: dealOf(WITH_NUMBER) });
    const { result } = await runOnce(f, job);
    expect(result).toEqual(record);
    expect(f.record).not.toHaveBeenCalled();
    expect(job.data).not.toHaveProperty('deal');
  });

  it("records the docflow the ledger names instead of a failure, as the row's own", async () => {
    const f = fakes({
      created: async () => {
        throw new ApiHttpError({ status: 400, endpoint: 'docflows', body: { code: 'badRequest', message: 'no' } });
      },
      writes: [
        {
          kind: 'submitted',
          own: true,
          deal: { docflowId: 'DF-5', outcome: 'queued', batch: 'b', row: 1, at: '2026-01-01T00:00:00.000Z' },
          via: 'feed',
        },
      ],
    });
    const { result } = await runOnce(f, jobOf({ deal: dealOf(WITH_NUMBER) }));
    expect(f.recorded.map((r) => r.record.outcome)).toEqual(['rejected', 'queued']);
    expect(result).toMatchObject({ outcome: 'queued', docflowId: 'DF-5' });
    expect(f.recorded[1]!.options?.ledger).toMatchObject({ bank: profile.organization.inn, via: 'feed' });
  });
});

describe('a deal job without a cadastral number', () => {
  const withoutNumber = (): Deal => {
    const deal = dealOf(BY_SUGGEST);
    delete deal.cadastralNumber;
    return deal;
  };

  it('asks suggest on its first run without a lookup, and ends not_found with NOT_FOUND when suggest finds nothing, completing its job', async () => {
    const f = fakes();
    const { thrown, result } = await runOnce(f, jobOf({ dealId: BY_SUGGEST, deal: withoutNumber() }));
    expect(f.lookup).not.toHaveBeenCalled();
    expect(f.suggest).toHaveBeenCalledTimes(1);
    expect(f.recorded).toHaveLength(1);
    expect(f.recorded[0]!.record).toMatchObject({ outcome: 'not_found', errorCode: 'NOT_FOUND' });
    // The row reached its outcome: the job completes with its record.
    expect(thrown).toBeUndefined();
    expect(result).toEqual(f.recorded[0]!.record);
    expect(f.claim).not.toHaveBeenCalled();
  });

  it('looks up its checkpoint on a later run and sends that number without asking suggest', async () => {
    const f = fakes();
    f.lookup.mockResolvedValue({ earlier: undefined, cadastralNumber: '54:35:000000:1', entry: undefined });
    const { result } = await runOnce(f, jobOf({ dealId: BY_SUGGEST, deal: withoutNumber() }, { attemptsMade: 1 }));
    expect(f.suggest).not.toHaveBeenCalled();
    expect(result).toMatchObject({ outcome: 'queued', cadastralNumber: '54:35:000000:1' });
  });
});

describe('a deal job whose dealId the ledger has for another property', () => {
  const made = { docflowId: 'DF-9', outcome: 'queued' as const, batch: 'night', row: 2, at: '2026-01-01T00:00:00.000Z' };
  const OTHER = { cadastralNumber: '77:06:0001003:1578', address: 'москва, вавилова, 81, 112' };
  const entry = (property: { cadastralNumber?: string; address?: string } | undefined) => ({
    dealId: WITH_NUMBER,
    bank: profile.organization.inn,
    n: 0,
    requestId: REQUEST_ID,
    state: 'submitted' as const,
    ...made,
    via: 'answer' as const,
    // The ledger keeps the address as a digest.
    ...(property && { property: storedProperty(property) }),
  });

  it('claims with the property the row is for, and on a conflict is refused DEAL_ID_CONFLICT naming both, nothing sent', async () => {
    const f = fakes({ verdict: { kind: 'conflict', deal: made, property: OTHER } });
    const { result, thrown } = await runOnce(f, jobOf({ deal: dealOf(WITH_NUMBER) }));
    expect(thrown).toBeUndefined();
    expect(f.claim.mock.calls[0]).toMatchObject([
      { property: { cadastralNumber: '77:06:0005011:2376', address: 'москва, профсоюзная, 104, 215' } },
    ]);
    expect(result).toMatchObject({ outcome: 'invalid', errorCode: 'DEAL_ID_CONFLICT', cadastralNumber: '77:06:0005011:2376' });
    expect(result!.errorMessage).toBe(
      `dealId ${WITH_NUMBER} was registered for 77:06:0001003:1578 (batch night, row 2, docflow DF-9); this row is for 77:06:0005011:2376: give this deal its own dealId`,
    );
    expect(f.recorded[0]!.options?.ledger).toBeUndefined();
    expect(f.createDocflow).not.toHaveBeenCalled();
  });

  const withoutNumber = (): Deal => {
    const deal = dealOf(BY_SUGGEST);
    delete deal.cadastralNumber;
    return deal;
  };
  const later = (data: Partial<DealJobData> = {}) => jobOf({ dealId: BY_SUGGEST, deal: withoutNumber(), ...data }, { attemptsMade: 1 });

  it('on a later run, is refused by the lookup when its checkpoint names another number, --resubmit or not, without suggest or a claim', async () => {
    const f = fakes();
    f.lookup.mockResolvedValue({ earlier: undefined, cadastralNumber: '54:35:000000:1', entry: entry(OTHER) });
    const { result } = await runOnce(f, later({ resubmit: true }));
    expect(result).toMatchObject({ outcome: 'invalid', errorCode: 'DEAL_ID_CONFLICT', cadastralNumber: '54:35:000000:1' });
    expect(result!.errorMessage).toContain(
      'registered for 77:06:0001003:1578 (batch night, row 2, docflow DF-9); this row is for 54:35:000000:1',
    );
    expect(f.suggest).not.toHaveBeenCalled();
    expect(f.claim).not.toHaveBeenCalled();
  });

  it('on a later run, takes an entry for the same address, or one that kept no property (written before), as already_submitted', async () => {
    for (const property of [
      { cadastralNumber: '54:35:000000:9', address: 'новосибирская область, новосибирск, челюскинцев, 14, 81' },
      undefined,
    ]) {
      const f = fakes();
      f.lookup.mockResolvedValue({ earlier: undefined, cadastralNumber: undefined, entry: entry(property) });
      const { result } = await runOnce(f, later());
      expect(result).toMatchObject({ outcome: 'already_submitted', docflowId: 'DF-9' });
      expect(f.suggest).not.toHaveBeenCalled();
    }
  });

  it('on a later run without a number and another address, asks suggest: the claim decides, and a failure stays its own', async () => {
    const f = fakes();
    f.lookup.mockResolvedValue({ earlier: undefined, cadastralNumber: undefined, entry: entry(OTHER) });
    const { result } = await runOnce(f, later());
    expect(f.suggest).toHaveBeenCalledTimes(1);
    expect(result).toMatchObject({ outcome: 'not_found' });
    // The store is told the row's property: another property's docflow never becomes this row's outcome.
    expect(f.recorded[0]!.options?.ledger).toMatchObject({
      property: { address: 'новосибирская область, новосибирск, челюскинцев, 14, 81' },
    });
  });
});

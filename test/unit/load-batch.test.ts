/**
 * Every path of a load, over a fake load context: no Redis, no network, only the
 * input files on disk. The fake keeps what the real context (src/batch/
 * redis-load-context.ts, over src/batch/batch-store.ts) keeps: the batch's state,
 * its jobs by job id, its row index and outcomes, the ledger, the metrics. The same
 * paths over Redis are in load.test.ts, load-edges.test.ts and never-twice.test.ts.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BatchState } from '../../src/batch/batch-store.js';
import { loadBatchWith, type LoadRequest, type LoadSummary } from '../../src/batch/load-batch.js';
import { takeBackJobs, type JobStore, type LedgerDeal, type LoadContext } from '../../src/batch/load-context.js';
import { BatchJobsHeldError, InputError, LeftoverJobsHeldError, UsageError } from '../../src/errors.js';
import { loadProfile, type BankProfile } from '../../src/input/profile.js';
import { storedProperty } from '../../src/input/property-key.js';
import { createLogger } from '../../src/logger.js';
import type { OutcomeRecord } from '../../src/domain/outcome.js';
import { dealJobId, dealOf, type DealJobData } from '../../src/queue/job-data.js';
import { ROOT } from '../helpers/cli.js';
import { csvText, ROWS, SAMPLE_INVALID, SAMPLE_READ } from '../helpers/fixtures.js';

const VALID = SAMPLE_READ - SAMPLE_INVALID;
/** The sample's refused rows (samples/README.md): a SNILS checksum, a birth place and issue date, a repeated dealId. */
const INVALID_ROWS = [9, 14, 18];
const BANK = '7701934587';

interface FakeBatch {
  fingerprint: string;
  resubmit: boolean;
  state: BatchState;
  total?: number;
  error?: string;
}

/** A load context over maps, as the real one keeps things in Redis; `world` is what a test looks at and sets up. */
function fakeRedis() {
  const world = {
    batches: new Map<string, FakeBatch>(),
    /** Jobs by job id, as BullMQ keeps them. */
    jobs: new Map<string, DealJobData>(),
    /** Job ids a worker holds, and for how many more attempts to remove them (Infinity: for good). */
    held: new Map<string, number>(),
    /** Each batch's row index: row → dealId. */
    rows: new Map<string, Map<number, string>>(),
    outcomes: new Map<string, Map<number, OutcomeRecord>>(),
    /** `<bank>|<dealId>` → its docflow. */
    ledger: new Map<string, LedgerDeal>(),
    metrics: new Map<string, number>(),
    heartbeats: 0,
    fails: [] as Array<{ batch: string; error: string }>,
    released: [] as string[],
    writes: 0,
    opened: 0,
    closed: 0,
    /** Makes the n-th chunk's write (1-based, counted over the whole world) fail with this error. */
    failWrite: undefined as ((n: number) => Error | undefined) | undefined,
  };
  const index = <V>(map: Map<string, Map<number, V>>, batch: string): Map<number, V> => {
    if (!map.has(batch)) map.set(batch, new Map());
    return map.get(batch)!;
  };
  const addNew = (batch: string, jobs: readonly DealJobData[]): void => {
    for (const job of jobs) if (!world.jobs.has(dealJobId(batch, job.dealId))) world.jobs.set(dealJobId(batch, job.dealId), job);
  };

  const batches: LoadContext['batches'] = {
    // As batch-store.ts decides: another input is refused; a failed (or new) batch starts afresh;
    // a loaded or loading one is resumed, with the --resubmit it was first loaded with.
    async open(meta) {
      const had = world.batches.get(meta.id);
      if (had && had.fingerprint !== meta.fingerprint)
        throw new UsageError(`Batch ${meta.id} holds other rows (${meta.file}); give this input a new --batch.`);
      const fresh = !had || had.state === 'failed';
      if (!fresh && had.resubmit !== (meta.resubmit ?? false)) {
        throw new UsageError(
          meta.resubmit
            ? `Batch ${meta.id} was loaded without --resubmit; its rows cannot be sent again now: give this load a new --batch to resubmit its deals.`
            : `Batch ${meta.id} was loaded with --resubmit; load it again with --resubmit (or give a new --batch).`,
        );
      }
      world.batches.set(meta.id, {
        fingerprint: meta.fingerprint,
        resubmit: meta.resubmit ?? false,
        state: had?.state === 'loaded' ? 'loaded' : 'loading',
      });
      return { fresh };
    },
    async heartbeat() {
      world.heartbeats++;
    },
    async state(id) {
      return world.batches.get(id)?.state;
    },
    async setTotal(id, total) {
      Object.assign(world.batches.get(id)!, { state: 'loaded', total });
    },
    async fail(id, error) {
      world.fails.push({ batch: id, error });
      Object.assign(world.batches.get(id)!, { state: 'failed', error });
    },
  };

  const jobs: JobStore = {
    async submittedDeals(bank, dealIds) {
      return dealIds.map((dealId) => world.ledger.get(`${bank}|${dealId}`));
    },
    async write(batch, all, outcomes, options) {
      world.writes++;
      const fault = world.failWrite?.(world.writes);
      if (fault) throw fault;
      const finished = all.map((job) => options?.skipFinished === true && world.outcomes.get(batch)?.has(job.row) === true);
      const chunk = all.filter((_, i) => !finished[i]);
      const existed = all.map((job, i) => finished[i] || world.jobs.has(dealJobId(batch, job.dealId)));
      for (const job of chunk) index(world.rows, batch).set(job.row, job.dealId);
      for (const o of outcomes) {
        index(world.outcomes, batch).set(o.row, o);
        world.metrics.set(`outcome|${o.outcome}`, (world.metrics.get(`outcome|${o.outcome}`) ?? 0) + 1);
      }
      addNew(batch, chunk);
      return existed;
    },
    async add(batch, chunk) {
      addNew(batch, chunk);
    },
    async remove(batch, dealIds) {
      let removed = 0;
      let held = 0;
      for (const id of dealIds.map((dealId) => dealJobId(batch, dealId))) {
        const holds = world.held.get(id) ?? 0;
        if (holds > 0) {
          world.held.set(id, holds - 1);
          held++;
        } else if (world.jobs.delete(id)) removed++;
      }
      return { removed, held };
    },
    async *rowPages(batch) {
      const dealIds = [...(world.rows.get(batch)?.values() ?? [])];
      for (let i = 0; i < dealIds.length; i += 7) yield dealIds.slice(i, i + 7);
    },
    async clear(batch) {
      world.rows.delete(batch);
      world.outcomes.delete(batch);
    },
    async release(batch) {
      world.released.push(batch);
    },
  };

  const open = (): LoadContext => {
    world.opened++;
    return {
      batches,
      jobs,
      close: async () => {
        world.closed++;
      },
    };
  };
  const jobsOf = (batch: string): DealJobData[] =>
    [...world.jobs.entries()].filter(([id]) => id.startsWith(`${batch}.`)).map(([, job]) => job);
  const outcomesOf = (batch: string): OutcomeRecord[] => [...(world.outcomes.get(batch)?.values() ?? [])];
  return { world, open, jobsOf, outcomesOf };
}

type Fake = ReturnType<typeof fakeRedis>;

describe('loadBatch over a fake load context (no Redis)', () => {
  let dir: string;
  let profile: BankProfile;
  /** The 24 sample rows, 3 of them invalid. */
  let samples: string;
  const silent = createLogger({ level: 'silent' });
  const load = (fake: Fake, file: string, extra: Partial<LoadRequest> = {}): Promise<LoadSummary> =>
    loadBatchWith(fake.open, { file, batch: 'b', profile, logger: silent, rejects: join(dir, 'b.rejects.csv'), ...extra });
  /** Every context a load opened, it closed, whatever became of the load. */
  const expectClosed = (fake: Fake): void => expect(fake.world.closed).toBe(fake.world.opened);
  const failing = (error: Error, from: number) => (n: number) => (n >= from ? error : undefined);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-load-batch-'));
    profile = await loadProfile(join(ROOT, 'samples/bank-profile.json'));
    samples = join(dir, 'samples.csv');
    await writeFile(samples, csvText(ROWS));
  });
  afterEach(async () => {
    await rm(join(dir, 'b.rejects.csv'), { force: true });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a fresh load gives every row exactly one job or one outcome, then marks the batch loaded and releases its jobs', async () => {
    const fake = fakeRedis();
    const summary = await load(fake, samples, { chunkSize: 5 });

    expect(summary).toMatchObject({
      batch: 'b',
      read: SAMPLE_READ,
      valid: VALID,
      invalid: SAMPLE_INVALID,
      enqueued: VALID,
      alreadyEnqueued: 0,
      alreadySubmitted: 0,
      dryRun: false,
      rejectsFile: join(dir, 'b.rejects.csv'),
    });
    const jobs = fake.jobsOf('b');
    const outcomes = fake.outcomesOf('b');
    expect(jobs).toHaveLength(VALID);
    expect(jobs.every((j) => j.batch === 'b' && dealOf(j)?.dealId === j.dealId && j.resubmit === undefined)).toBe(true);
    const rows = [...jobs.map((j) => j.row), ...outcomes.map((o) => o.row)].sort((a, b) => a - b);
    expect(rows).toEqual(Array.from({ length: SAMPLE_READ }, (_, i) => i + 1));
    // Each job's row is in the row index, which is how a failed load finds its jobs again.
    expect(new Map(jobs.map((j) => [j.row, j.dealId]))).toEqual(fake.world.rows.get('b'));
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'loaded', total: SAMPLE_READ, resubmit: false });
    expect(fake.world.released).toEqual(['b']);
    expect(fake.world.heartbeats).toBeGreaterThan(0);
    expect(fake.world.fails).toEqual([]);
    expectClosed(fake);
  });

  it('each refused row gets its invalid outcome naming its row, field and problem, and a line in the rejects file', async () => {
    const fake = fakeRedis();
    const summary = await load(fake, samples);

    const outcomes = fake.outcomesOf('b').sort((a, b) => a.row - b.row);
    expect(outcomes.map((o) => o.row)).toEqual(INVALID_ROWS);
    expect(outcomes.every((o) => o.outcome === 'invalid' && o.attempts === 0)).toBe(true);
    // The repeated dealId is another property's (row 2 is 77:06:0005011:2376, this one 77:06:0001003:1578).
    expect(outcomes.map((o) => o.errorCode)).toEqual(['INVALID', 'INVALID', 'DEAL_ID_CONFLICT']);
    expect(outcomes[0]).toMatchObject({ dealId: 'NSK-2026-000127', errorMessage: 'ownerSnils: checksum does not match' });
    expect(outcomes[1]!.errorMessage).toMatch(/^ownerBirthPlace: .+; ownerDocIssueDate: /);
    expect(outcomes[2]).toMatchObject({
      dealId: 'MSK-2026-004511',
      errorMessage: 'dealId: repeats the dealId of row 2, which is for another property',
    });
    expect(fake.jobsOf('b').some((j) => INVALID_ROWS.includes(j.row))).toBe(false);
    expect(fake.world.metrics.get('outcome|invalid')).toBe(SAMPLE_INVALID);
    expect(summary.invalidByField).toMatchObject({ ownerSnils: 1, dealId: 1, ownerBirthPlace: 1 });
    const rejects = readFileSync(summary.rejectsFile!, 'utf8');
    expect(rejects.trim().split('\n')).toHaveLength(1 + SAMPLE_INVALID);
    expect(rejects).toContain('dealId: repeats the dealId of row 2, which is for another property');
  });

  it("a reload of a loaded batch adds no job, counts its jobs as already enqueued, leaves its rows' outcomes to them, and does not release them again", async () => {
    const fake = fakeRedis();
    await load(fake, samples);
    const first = new Map(fake.world.jobs);
    // Row 1's deal reached the registry meanwhile: its job says so when it runs; the reload does not look.
    fake.world.ledger.set(`${BANK}|NSK-2026-000123`, {
      batch: 'other',
      row: 4,
      docflowId: 'DF-OTHER',
      outcome: 'queued',
      at: '2026-03-01T10:00:00.000Z',
      via: 'answer',
    });

    const again = await load(fake, samples);
    expect(again).toMatchObject({ read: SAMPLE_READ, enqueued: 0, alreadyEnqueued: VALID, alreadySubmitted: 0 });
    // The very same jobs: none removed and made again.
    expect(fake.world.jobs).toEqual(first);
    for (const [id, job] of fake.world.jobs) expect(job).toBe(first.get(id));
    expect(fake.outcomesOf('b')).toHaveLength(SAMPLE_INVALID);
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'loaded', total: SAMPLE_READ });
    expect(fake.world.released).toEqual(['b']);
    expectClosed(fake);
  });

  it('a reload with the other --resubmit setting is refused with exit 2 and leaves the batch, its jobs and its rejects file as they were', async () => {
    const fake = fakeRedis();
    const first = await load(fake, samples);
    const rejectsBefore = readFileSync(first.rejectsFile!, 'utf8');
    const jobsBefore = new Map(fake.world.jobs);
    const writes = fake.world.writes;

    const refused = load(fake, samples, { resubmit: true });
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(refused).rejects.toMatchObject({
      exitCode: 2,
      code: 'ERR_USAGE',
      message: expect.stringContaining('was loaded without --resubmit'),
    });
    expect(fake.world.writes).toBe(writes);
    expect(fake.world.jobs).toEqual(jobsBefore);
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'loaded', resubmit: false });
    expect(fake.world.fails).toEqual([]);
    expect(readFileSync(first.rejectsFile!, 'utf8')).toBe(rejectsBefore);
    expectClosed(fake);
  });

  it('a file that breaks half-way marks the batch failed and takes back every job it had added, so none is sent', async () => {
    // 3,000 good rows under new ids (more than the reader takes in at once), then a quote that never closes.
    const rows = Array.from({ length: 3000 }, (_, i) => ROWS[1]!.map((cell, c) => (c === 0 ? `BROKEN-${i}` : cell)));
    const broken = join(dir, 'broken.csv');
    await writeFile(broken, `${csvText(rows)}"never closed,${'x,'.repeat(10)}\n`);
    const fake = fakeRedis();

    const failed = load(fake, broken, { chunkSize: 100 });
    await expect(failed).rejects.toBeInstanceOf(InputError);
    await expect(failed).rejects.toThrow(/cannot be read as CSV near line \d+/);
    // Chunks had gone in before the break ...
    expect(fake.world.writes).toBeGreaterThan(1);
    // ... and every job of them is gone again, never released to the workers.
    expect(fake.jobsOf('b')).toEqual([]);
    expect(fake.world.released).toEqual([]);
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'failed', error: expect.stringMatching(/cannot be read as CSV/) });
    expect(existsSync(join(dir, 'b.rejects.csv'))).toBe(false);
    expectClosed(fake);
  });

  it('a load of a batch whose earlier load failed starts afresh: what that load left is taken back and cleared first', async () => {
    const fake = fakeRedis();
    // An earlier load of the same input failed, and some of what it wrote could not be taken back then.
    fake.world.batches.set('b', { fingerprint: 'F', resubmit: false, state: 'failed', error: 'it broke' });
    fake.world.rows.set('b', new Map([[30, 'LEFT-1']]));
    fake.world.jobs.set(dealJobId('b', 'LEFT-1'), { batch: 'b', row: 30, dealId: 'LEFT-1' });
    fake.world.outcomes.set('b', new Map([[77, { row: 77, dealId: 'LEFT-2', outcome: 'invalid', attempts: 0, finishedAt: '' }]]));

    const summary = await load(fake, samples, { fingerprint: 'F' });
    expect(summary).toMatchObject({ enqueued: VALID, alreadyEnqueued: 0 });
    expect(fake.jobsOf('b').map((j) => j.dealId)).not.toContain('LEFT-1');
    expect(fake.jobsOf('b')).toHaveLength(VALID);
    expect([...fake.world.rows.get('b')!.keys()]).not.toContain(30);
    expect(
      fake
        .outcomesOf('b')
        .map((o) => o.row)
        .sort((a, b) => a - b),
    ).toEqual(INVALID_ROWS);
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'loaded', total: SAMPLE_READ });
  });

  it("rows whose deal the ledger holds get their outcome at load and no job: another row's docflow is already_submitted, the row's own is its outcome again", async () => {
    const fake = fakeRedis();
    const at = '2026-03-01T10:00:00.000Z';
    fake.world.ledger.set(`${BANK}|NSK-2026-000123`, {
      batch: 'other',
      row: 4,
      docflowId: 'DF-OTHER',
      outcome: 'queued',
      at,
      via: 'answer',
    });
    fake.world.ledger.set(`${BANK}|MSK-2026-004512`, { batch: 'b', row: 5, docflowId: 'DF-OWN', outcome: 'suspended', at, via: 'feed' });
    // A docflow the feed found with no row to hold it: the row's worker claims it, so the row gets a job.
    fake.world.ledger.set(`${BANK}|SPB-2026-010077`, { batch: '', row: 0, docflowId: 'DF-FOUND', outcome: 'queued', at, via: 'feed' });

    const summary = await load(fake, samples);
    expect(summary).toMatchObject({ valid: VALID, enqueued: VALID - 2, alreadySubmitted: 2 });
    const outcome = (row: number) => fake.outcomesOf('b').find((o) => o.row === row);
    expect(outcome(1)).toMatchObject({
      dealId: 'NSK-2026-000123',
      outcome: 'already_submitted',
      docflowId: 'DF-OTHER',
      errorMessage: expect.stringContaining('batch other, row 4'),
    });
    expect(outcome(5)).toMatchObject({ dealId: 'MSK-2026-004512', outcome: 'suspended', docflowId: 'DF-OWN', httpStatus: 201 });
    expect(outcome(4)).toBeUndefined();
    expect(fake.jobsOf('b').map((j) => j.row)).not.toContain(1);
    expect(fake.jobsOf('b').map((j) => j.row)).not.toContain(5);
    expect(fake.jobsOf('b').map((j) => j.row)).toContain(4);
    expect(fake.world.metrics.get('outcome|already_submitted')).toBe(1);
    expect(fake.world.metrics.get('outcome|suspended')).toBe(1);
  });

  it('refuses at load a row whose dealId the ledger has for another cadastral number, --resubmit or not; the same property stays already_submitted', async () => {
    for (const resubmit of [false, true]) {
      const fake = fakeRedis();
      const at = '2026-03-01T10:00:00.000Z';
      const made = { batch: 'other', row: 4, docflowId: 'DF-OTHER', outcome: 'queued' as const, at, via: 'answer' as const };
      // Row 2 (77:06:0005011:2376): the ledger has its dealId for another flat.
      fake.world.ledger.set(`${BANK}|MSK-2026-004511`, { ...made, property: { cadastralNumber: '77:06:0001003:1578' } });
      // Row 6 (78:06:0002123:4471): the same number, the address written otherwise: the same deal.
      fake.world.ledger.set(`${BANK}|SPB-2026-010078`, {
        ...made,
        property: storedProperty({ cadastralNumber: '78:06:0002123:4471', address: 'спб' }),
      });
      // Row 1 (no number, Челюскинцев 14-81): another address; only the worker's claim can tell, once suggest gave the number.
      fake.world.ledger.set(`${BANK}|NSK-2026-000123`, {
        ...made,
        property: { cadastralNumber: '54:35:1:1', address: 'новосибирск, ленина, 1' },
      });
      // Row 3 (no number): the same address: the same deal.
      fake.world.ledger.set(`${BANK}|NSK-2026-000124`, {
        ...made,
        property: storedProperty({ address: 'новосибирская область, новосибирск, татьяны снежиной, 39, 57' }),
      });

      const summary = await load(fake, samples, { resubmit });
      const outcome = (row: number) => fake.outcomesOf('b').find((o) => o.row === row);
      const jobRows = fake.jobsOf('b').map((j) => j.row);
      expect(outcome(2)).toMatchObject({ outcome: 'invalid', errorCode: 'DEAL_ID_CONFLICT', cadastralNumber: '77:06:0005011:2376' });
      expect(outcome(2)!.errorMessage).toBe(
        'dealId MSK-2026-004511 was registered for 77:06:0001003:1578 (batch other, row 4, docflow DF-OTHER); this row is for 77:06:0005011:2376: give this deal its own dealId',
      );
      expect(jobRows).not.toContain(2);
      expect(jobRows).toContain(1);
      expect(summary).toMatchObject({ valid: VALID - 1, invalid: SAMPLE_INVALID + 1, invalidByField: { dealId: 2 } });
      if (resubmit) {
        expect(jobRows).toEqual(expect.arrayContaining([3, 6]));
        expect(summary.alreadySubmitted).toBe(0);
      } else {
        expect(outcome(6)).toMatchObject({ outcome: 'already_submitted', docflowId: 'DF-OTHER' });
        expect(outcome(3)).toMatchObject({ outcome: 'already_submitted', docflowId: 'DF-OTHER' });
        expect(summary.alreadySubmitted).toBe(2);
      }
      expect(fake.world.metrics.get('outcome|invalid')).toBe(SAMPLE_INVALID + 1);
    }
  });

  it("with --resubmit a deal another row made gets a job marked resubmit, while a row's own docflow still stands", async () => {
    const fake = fakeRedis();
    const at = '2026-03-01T10:00:00.000Z';
    fake.world.ledger.set(`${BANK}|NSK-2026-000123`, {
      batch: 'other',
      row: 4,
      docflowId: 'DF-OTHER',
      outcome: 'queued',
      at,
      via: 'answer',
    });
    fake.world.ledger.set(`${BANK}|MSK-2026-004512`, { batch: 'b', row: 5, docflowId: 'DF-OWN', outcome: 'queued', at, via: 'answer' });

    const summary = await load(fake, samples, { resubmit: true });
    expect(summary).toMatchObject({ enqueued: VALID - 1, alreadySubmitted: 1 });
    expect(fake.jobsOf('b').find((j) => j.row === 1)).toMatchObject({ dealId: 'NSK-2026-000123', resubmit: true });
    expect(fake.outcomesOf('b').find((o) => o.row === 5)).toMatchObject({ outcome: 'queued', docflowId: 'DF-OWN', httpStatus: 200 });
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'loaded', resubmit: true });
  });

  it("a chunk whose enqueue Redis refuses surfaces Redis' error, marks the batch failed and takes back its jobs", async () => {
    const fake = fakeRedis();
    const oom = Object.assign(new Error("OOM command not allowed when used memory > 'maxmemory'."), { name: 'ReplyError' });
    fake.world.failWrite = failing(oom, 3);

    await expect(load(fake, samples, { chunkSize: 5 })).rejects.toBe(oom);
    expect(fake.world.writes).toBeGreaterThanOrEqual(3);
    expect(fake.world.fails).toEqual([{ batch: 'b', error: oom.message }]);
    expect(fake.world.batches.get('b')?.state).toBe('failed');
    expect(fake.jobsOf('b')).toEqual([]);
    expect(fake.world.released).toEqual([]);
    expect(existsSync(join(dir, 'b.rejects.csv'))).toBe(false);
    expectClosed(fake);
  });

  it('a chunk whose enqueue is cut off by a Redis outage surfaces the error and leaves the batch loading, its jobs kept for a resume', async () => {
    const fake = fakeRedis();
    const closed = new Error('Connection is closed.');
    fake.world.failWrite = failing(closed, 3);

    await expect(load(fake, samples, { chunkSize: 5 })).rejects.toBe(closed);
    expect(fake.world.fails).toEqual([]);
    expect(fake.world.batches.get('b')?.state).toBe('loading');
    expect(fake.jobsOf('b')).toHaveLength(fake.world.rows.get('b')!.size);
    expect(fake.jobsOf('b').length).toBeGreaterThan(0);
    expect(fake.world.released).toEqual([]);
    expectClosed(fake);
  });

  it('a load that stopped part-way is resumed by loading the same input again: its jobs are counted, the rest added, none twice', async () => {
    const fake = fakeRedis();
    fake.world.failWrite = failing(new Error('Connection is closed.'), 3);
    await expect(load(fake, samples, { chunkSize: 5 })).rejects.toThrow('Connection is closed.');
    const before = fake.jobsOf('b').length;
    fake.world.failWrite = undefined;

    const resumed = await load(fake, samples, { chunkSize: 5 });
    expect(resumed.alreadyEnqueued).toBe(before);
    expect(resumed.enqueued + resumed.alreadyEnqueued).toBe(VALID);
    expect(new Set(fake.jobsOf('b').map((j) => j.dealId)).size).toBe(VALID);
    expect(fake.jobsOf('b')).toHaveLength(VALID);
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'loaded', total: SAMPLE_READ });
    // The workers held its jobs back while it was loading: they are released now.
    expect(fake.world.released).toEqual(['b']);
  });

  it('a fresh load makes again the jobs an earlier life of the batch id left behind, so that their rows run', async () => {
    const fake = fakeRedis();
    const stale: DealJobData = { batch: 'b', row: 1, dealId: 'NSK-2026-000123' };
    fake.world.jobs.set(dealJobId('b', 'NSK-2026-000123'), stale);

    const summary = await load(fake, samples);
    expect(summary).toMatchObject({ enqueued: VALID, alreadyEnqueued: 0 });
    const remade = fake.world.jobs.get(dealJobId('b', 'NSK-2026-000123'));
    expect(remade).not.toBe(stale);
    expect(remade && dealOf(remade)?.dealId).toBe('NSK-2026-000123');
  });

  it('a leftover job a worker holds stops a fresh load with LeftoverJobsHeldError, and the batch is failed with its jobs taken back', async () => {
    const fake = fakeRedis();
    const id = dealJobId('b', 'NSK-2026-000123');
    fake.world.jobs.set(id, { batch: 'b', row: 1, dealId: 'NSK-2026-000123' });
    // Held while the load tries to make it again; let go a moment later, as workers do.
    fake.world.held.set(id, 1);

    const stopped = load(fake, samples);
    await expect(stopped).rejects.toBeInstanceOf(LeftoverJobsHeldError);
    await expect(stopped).rejects.toMatchObject({
      code: 'ERR_LEFTOVER_JOBS_HELD',
      exitCode: 1,
      held: 1,
      message: '1 jobs of an earlier load of batch b are still held by a worker; load again in a minute',
    });
    expect(fake.world.batches.get('b')?.state).toBe('failed');
    expect(fake.jobsOf('b')).toEqual([]);
    expectClosed(fake);
  });

  it('a file of its header and no record is a night with no deals: a loaded batch of none, no job (issue 40, point 7)', async () => {
    const headerOnly = join(dir, 'header-only.csv');
    await writeFile(headerOnly, csvText([]));
    const fake = fakeRedis();

    expect(await load(fake, headerOnly)).toMatchObject({ read: 0, valid: 0, invalid: 0, enqueued: 0 });
    expect(fake.world.batches.get('b')).toMatchObject({ state: 'loaded', total: 0 });
    expect(fake.jobsOf('b')).toEqual([]);
    expectClosed(fake);
    // A JSON export of no deals: an empty array, or an object with an empty "deals".
    for (const [name, text] of [
      ['none.json', '[]'],
      ['none-object.json', '{"exportedAt": "2026-11-20", "deals": []}'],
    ] as const) {
      const json = join(dir, name);
      await writeFile(json, text);
      expect(await load(fakeRedis(), json), name).toMatchObject({ read: 0, enqueued: 0 });
    }
  });

  it('a file without even a header (0 bytes, what a failed export leaves) is refused, and the batch it opened is failed', async () => {
    const empty = join(dir, 'empty.csv');
    await writeFile(empty, '');
    const fake = fakeRedis();

    const refused = load(fake, empty);
    await expect(refused).rejects.toBeInstanceOf(InputError);
    await expect(refused).rejects.toThrow(`${empty} is empty`);
    expect(fake.world.batches.get('b')?.state).toBe('failed');
    expect(fake.world.released).toEqual([]);
  });

  it('a file that changes while it is read is refused, and nothing of it is released', async () => {
    const growing = join(dir, 'growing.csv');
    await writeFile(growing, csvText(ROWS));
    const fake = fakeRedis();
    let touched = false;
    const onProgress = () => {
      if (touched) return;
      touched = true;
      // Another process still writing it: its bytes grow (a file only touched is the same file: input-touched.test.ts).
      appendFileSync(growing, 'MSK-2026-009999,');
    };

    await expect(load(fake, growing, { chunkSize: 5, onProgress })).rejects.toThrow(/changed while it was read/);
    expect(fake.world.batches.get('b')?.state).toBe('failed');
    expect(fake.jobsOf('b')).toEqual([]);
    expect(fake.world.released).toEqual([]);
  });

  it('a dry run opens no context, and still counts the rows and writes the rejects file', async () => {
    const fake = fakeRedis();
    const summary = await load(fake, samples, { dryRun: true });
    expect(summary).toMatchObject({
      dryRun: true,
      read: SAMPLE_READ,
      valid: VALID,
      invalid: SAMPLE_INVALID,
      enqueued: 0,
      alreadyEnqueued: 0,
    });
    expect(fake.world.opened).toBe(0);
    expect(summary.rejectsFile).toBe(join(dir, 'b.rejects.csv'));
  });
});

describe("taking back a batch's jobs", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('removes every job the row index names, passing again while a worker holds some', async () => {
    const fake = fakeRedis();
    const dealIds = Array.from({ length: 20 }, (_, i) => `D-${i}`);
    fake.world.rows.set('b', new Map(dealIds.map((d, i) => [i + 1, d])));
    for (const [i, dealId] of dealIds.entries()) fake.world.jobs.set(dealJobId('b', dealId), { batch: 'b', row: i + 1, dealId });
    fake.world.held.set(dealJobId('b', 'D-3'), 2);

    expect(await takeBackJobs(fake.open().jobs, 'b')).toBe(20);
    expect(fake.jobsOf('b')).toEqual([]);
  });

  it('gives up with BatchJobsHeldError when a worker holds a job through every pass', async () => {
    vi.useFakeTimers();
    const fake = fakeRedis();
    fake.world.rows.set('b', new Map([[1, 'D-1']]));
    fake.world.jobs.set(dealJobId('b', 'D-1'), { batch: 'b', row: 1, dealId: 'D-1' });
    fake.world.held.set(dealJobId('b', 'D-1'), Infinity);

    const given = takeBackJobs(fake.open().jobs, 'b');
    const expectation = expect(given).rejects.toMatchObject({
      name: 'BatchJobsHeldError',
      code: 'ERR_BATCH_JOBS_HELD',
      exitCode: 1,
      batch: 'b',
      message: 'some jobs of batch b stayed locked by a worker; run the load again',
    });
    await vi.runAllTimersAsync();
    await expectation;
    await expect(given).rejects.toBeInstanceOf(BatchJobsHeldError);
  });
});

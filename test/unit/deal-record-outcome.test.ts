/**
 * recordOutcome, the one way a row gets its outcome (the processor's finish and forget, the
 * worker's net under jobs BullMQ fails by itself), against a fake outcome store.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Deal } from '../../src/domain/deal.js';
import { recordOutcome } from '../../src/outcomes/record-outcome.js';
import type { OutcomeStore, RecordOptions, RecordResult } from '../../src/outcomes/store.js';
import type { OutcomeRecord } from '../../src/domain/outcome.js';
import type { DealJobData } from '../../src/queue/job-data.js';

const deal = { dealId: 'D-1', ownerSurname: 'Смирнова' } as unknown as Deal;
const data = (): DealJobData => ({ batch: 'b', row: 3, dealId: 'D-1', deal, waits: 2 });
const job = () => ({ key: '{x}:deals:b.3', data: data() });
const failed = (): OutcomeRecord => ({
  row: 3,
  dealId: 'D-1',
  outcome: 'failed',
  attempts: 2,
  errorCode: 'badСмирнова',
  errorMessage: 'Смирнова is wrong',
  cadastralNumber: '77:01:1',
  finishedAt: '2026-01-01T00:00:00.000Z',
});
const mask = (text: string) => text.replaceAll('Смирнова', '***');

function store(
  replies: Array<RecordResult | Error>,
): OutcomeStore & { calls: Array<{ record: OutcomeRecord; options: RecordOptions | undefined }> } {
  const calls: Array<{ record: OutcomeRecord; options: RecordOptions | undefined }> = [];
  return {
    calls,
    record: vi.fn(async (_batch: string, record: OutcomeRecord, options?: RecordOptions) => {
      calls.push({ record: structuredClone(record), options: structuredClone(options) });
      const reply = replies.shift() ?? { kind: 'written' };
      if (reply instanceof Error) throw reply;
      return reply;
    }),
    range: vi.fn(),
    count: vi.fn(),
  };
}

describe('recordOutcome', () => {
  it('masks the code and message of an outcome that did not reach the registry, and strips the deal from the job in the same write', async () => {
    const s = store([]);
    const done = await recordOutcome(s, { batch: 'b', job: job(), record: failed(), ledger: { bank: '77', resubmit: false }, mask });
    expect(s.calls).toHaveLength(1);
    expect(s.calls[0]!.record).toMatchObject({ errorCode: 'bad***', errorMessage: '*** is wrong' });
    expect(s.calls[0]!.options).toMatchObject({ ledger: { bank: '77', resubmit: false }, job: { key: '{x}:deals:b.3' } });
    expect(JSON.parse(s.calls[0]!.options!.job!.data)).toEqual({ batch: 'b', row: 3, dealId: 'D-1', waits: 2 });
    expect(done).toMatchObject({ kind: 'recorded', data: { batch: 'b', row: 3, dealId: 'D-1', waits: 2 } });
  });

  it('leaves the text of a submitted outcome as it is', async () => {
    const s = store([]);
    const record: OutcomeRecord = {
      row: 3,
      dealId: 'D-1',
      outcome: 'queued',
      docflowId: 'DF',
      attempts: 1,
      errorMessage: 'Смирнова',
      finishedAt: '',
    };
    await recordOutcome(s, { batch: 'b', job: job(), record, mask });
    expect(s.calls[0]!.record.errorMessage).toBe('Смирнова');
  });

  it("records the deal's docflow instead when the ledger names one, with the row's cadastral number and the same options", async () => {
    const s = store([
      {
        kind: 'submitted',
        own: true,
        deal: { docflowId: 'DF-5', outcome: 'suspended', batch: 'b', row: 3, at: '2026-01-02' },
        via: 'feed',
      },
    ]);
    const done = await recordOutcome(s, {
      batch: 'b',
      job: job(),
      record: failed(),
      ledger: { bank: '77', resubmit: true, keepClaim: true },
      ifAbsent: true,
      mask,
    });
    expect(s.calls.map((c) => c.record.outcome)).toEqual(['failed', 'suspended']);
    expect(s.calls[1]!.record).toMatchObject({ docflowId: 'DF-5', httpStatus: 201, cadastralNumber: '77:01:1', attempts: 2 });
    expect(s.calls[1]!.options).toMatchObject({ ifAbsent: true, ledger: { bank: '77', resubmit: true, via: 'feed' } });
    expect(s.calls[1]!.options!.ledger).not.toHaveProperty('keepClaim');
    expect(done).toMatchObject({ kind: 'recorded', record: { outcome: 'suspended', docflowId: 'DF-5' } });
  });

  it("records already_submitted, without the ledger, when another row made the deal's docflow", async () => {
    const s = store([
      {
        kind: 'submitted',
        own: false,
        deal: { docflowId: 'DF-6', outcome: 'queued', batch: 'a', row: 9, at: '2026-01-02' },
        via: 'answer',
      },
    ]);
    await recordOutcome(s, { batch: 'b', job: job(), record: failed(), ledger: { bank: '77', resubmit: false }, mask });
    expect(s.calls[1]!.record).toMatchObject({ outcome: 'already_submitted', docflowId: 'DF-6' });
    expect(s.calls[1]!.options!.ledger).toBeUndefined();
  });

  it('reports a second docflow for one deal', async () => {
    const s = store([{ kind: 'conflict', deal: { docflowId: 'DF-0', batch: 'a', row: 1 } }]);
    const done = await recordOutcome(s, {
      batch: 'b',
      job: job(),
      record: { ...failed(), outcome: 'queued', docflowId: 'DF-1' },
      ledger: { bank: '77', resubmit: false },
    });
    expect(done).toMatchObject({ kind: 'recorded', conflict: { docflowId: 'DF-0', batch: 'a', row: 1 } });
  });

  it('writes nothing when asked to write only into an empty row that has an outcome', async () => {
    const s = store([{ kind: 'exists' }]);
    expect(await recordOutcome(s, { batch: 'b', job: job(), record: failed(), ifAbsent: true })).toEqual({ kind: 'exists' });
    expect(s.calls).toHaveLength(1);
  });

  it('tries a failed write again on its own until it goes through', async () => {
    const s = store([new Error('READONLY'), new Error('READONLY')]);
    const done = await recordOutcome(s, { batch: 'b', job: job(), record: failed() });
    expect(s.calls).toHaveLength(3);
    expect(done.kind).toBe('recorded');
  });

  it('only strips the deal, through the locked job write, for a row that keeps its outcome', async () => {
    const s = store([]);
    const updateJob = vi.fn(async () => true);
    expect(await recordOutcome(s, { job: job(), updateJob })).toEqual({
      kind: 'kept',
      data: { batch: 'b', row: 3, dealId: 'D-1', waits: 2 },
    });
    expect(updateJob).toHaveBeenCalledWith({ batch: 'b', row: 3, dealId: 'D-1', waits: 2 });
    expect(s.calls).toHaveLength(0);
    // A job without its deal, or whose lock was lost: nothing to keep.
    expect(await recordOutcome(s, { job: { key: 'k', data: { batch: 'b', row: 3, dealId: 'D-1' } }, updateJob })).toEqual({
      kind: 'kept',
      data: undefined,
    });
    expect(updateJob).toHaveBeenCalledTimes(1);
    expect(await recordOutcome(s, { job: job(), updateJob: async () => false })).toEqual({ kind: 'kept', data: undefined });
  });
});

import { describe, expect, it } from 'vitest';
import { decodeOutcome, encodeOutcome } from '../../src/outcomes/outcome-codec.js';
import type { OutcomeRecord } from '../../src/outcomes/types.js';

const queued: OutcomeRecord = {
  row: 12345,
  dealId: 'DEAL-0012345',
  outcome: 'queued',
  docflowId: '0c8f2b9e-6a1d-4c3e-9f7b-2d5e8a1c4b3f',
  cadastralNumber: '54:35:041001:1234',
  httpStatus: 200,
  attempts: 1,
  finishedAt: '2026-11-24T21:03:12.345Z',
};

describe('an outcome as the outcomes hash keeps it', () => {
  it('reads back every field of every kind of outcome, the row from the field it is kept under', () => {
    const kinds: OutcomeRecord[] = [
      queued,
      {
        row: 2,
        dealId: '',
        outcome: 'invalid',
        attempts: 0,
        errorCode: 'INVALID',
        errorMessage: 'owners[0].snils: bad checksum',
        finishedAt: '2026-11-24T21:00:00.000Z',
      },
      {
        row: 3,
        dealId: 'D-3',
        outcome: 'ambiguous',
        attempts: 1,
        candidates: ['54:35:1:1', '54:35:1:2'],
        finishedAt: '2026-11-24T21:00:00.001Z',
      },
      {
        row: 4,
        dealId: 'D-4',
        outcome: 'failed',
        attempts: 5,
        httpStatus: 503,
        errorCode: 'ERR_UNCERTAIN',
        errorMessage: 'no "answer"\n',
        finishedAt: '2026-11-24T21:00:00.002Z',
      },
      { row: 5, dealId: 'D-5', outcome: 'pending', attempts: 0, finishedAt: '' },
      { row: 6, dealId: 'D-6', outcome: 'queued', attempts: 1, finishedAt: '2026-11-24T21:00:00+03:00' },
    ];
    for (const record of kinds) expect(decodeOutcome(encodeOutcome(record), record.row)).toEqual(record);
  });

  it('keeps no key names, no row, and the finish time as ms: a queued row in under 112 bytes', () => {
    const stored = encodeOutcome(queued);
    expect(stored).toBe(
      `["DEAL-0012345","queued","0c8f2b9e-6a1d-4c3e-9f7b-2d5e8a1c4b3f","54:35:041001:1234",200,1,${Date.parse(queued.finishedAt)}]`,
    );
    expect(Buffer.byteLength(stored)).toBeLessThan(112 - 4);
    expect(Buffer.byteLength(JSON.stringify(queued))).toBeGreaterThan(180);
  });

  it('never writes the state columns, which are read from the feed', () => {
    const joined: OutcomeRecord = { ...queued, state: 'completed', stateAt: queued.finishedAt, registryError: 'x' };
    expect(decodeOutcome(encodeOutcome(joined), joined.row)).toEqual(queued);
  });

  it('reads an outcome an earlier version stored as an object', () => {
    expect(decodeOutcome(JSON.stringify(queued), 1)).toEqual(queued);
  });
});

import { describe, expect, it } from 'vitest';
import { batchExitCode } from '../../src/batch/exit-code.js';
import type { StopReason } from '../../src/batch/wait-batch.js';
import { emptyCounts, type Outcome } from '../../src/domain/outcome.js';

/** A batch's results summary as batchExitCode reads it: its counts of outcomes and its duplicates. */
function results(counts: Partial<Record<Outcome, number>>, duplicates = 0) {
  return { counts: { ...emptyCounts(), ...counts }, duplicates };
}

const ALL_SUBMITTED = results({ queued: 3, suspended: 1, already_submitted: 2 });

describe('batchExitCode', () => {
  it('gives 0 when the wait ended with every row submitted', () => {
    expect(batchExitCode(undefined, ALL_SUBMITTED)).toBe(0);
  });

  it('gives 3 when the wait ended with a row that needs a person', () => {
    expect(batchExitCode(undefined, results({ queued: 3, invalid: 1 }))).toBe(3);
  });

  it('gives 3 when every row was submitted but a deal has two docflows at the gateway', () => {
    expect(batchExitCode(undefined, results({ queued: 3 }, 1))).toBe(3);
  });

  it('gives 1 when the wait ended with rows still pending', () => {
    expect(batchExitCode(undefined, results({ queued: 3, pending: 1 }))).toBe(1);
  });

  it('gives 3 when the deadline stopped the wait, whatever the rows are', () => {
    expect(batchExitCode('deadline', ALL_SUBMITTED)).toBe(3);
    expect(batchExitCode('deadline', results({ queued: 1, pending: 5 }))).toBe(3);
  });

  it.each<StopReason>(['session', 'signal', 'paused', 'missing'])(
    'gives 1 when %s stopped the wait, even with every row submitted',
    (stopped) => {
      expect(batchExitCode(stopped, ALL_SUBMITTED)).toBe(1);
      expect(batchExitCode(stopped, results({ queued: 1, invalid: 1 }, 1))).toBe(1);
    },
  );
});

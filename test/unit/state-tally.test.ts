/** A batch's rows by docflow state, and when a batch counts as registered. */
import { describe, expect, it } from 'vitest';
import { createStateTally } from '../../src/outcomes/state-tally.js';
import type { OutcomeRecord } from '../../src/outcomes/types.js';

const row = (n: number, outcome: OutcomeRecord['outcome'], extra: Partial<OutcomeRecord> = {}): OutcomeRecord => ({
  row: n,
  dealId: `D-${n}`,
  outcome,
  attempts: 1,
  finishedAt: `2026-11-24T0${n}:00:00.000Z`,
  ...extra,
});

describe('the state tally', () => {
  it('counts docflow states and requirements, and the oldest row still on its way', () => {
    const tally = createStateTally();
    tally.add(row(1, 'invalid'));
    tally.add(row(2, 'queued', { docflowId: 'a', state: 'completed' }));
    tally.add(row(3, 'queued', { docflowId: 'b', state: 'sent' }));
    tally.add(row(4, 'suspended', { docflowId: 'c', state: 'suspended', requirement: 'payment' }));
    tally.add(row(5, 'already_submitted', { docflowId: 'd' }));
    expect(tally.result(true)).toEqual({
      states: { completed: 1, sent: 1, suspended: 1, unknown: 1 },
      waitingFor: { payment: 1 },
      registered: false,
      oldestUnfinished: { row: 3, since: '2026-11-24T03:00:00.000Z' },
    });
  });

  it('is registered only when every row is done and every docflow completed or refused', () => {
    const tally = createStateTally();
    tally.add(row(1, 'not_found'));
    tally.add(row(2, 'queued', { docflowId: 'a', state: 'completed' }));
    tally.add(row(3, 'suspended', { docflowId: 'b', state: 'error' }));
    expect(tally.result(true)).toMatchObject({ registered: true });
    expect(tally.result(true).oldestUnfinished).toBeUndefined();
    expect(tally.result(false)).toMatchObject({ registered: false });
    tally.add(row(4, 'pending', { finishedAt: '' }));
    expect(tally.result(true)).toMatchObject({ registered: false });
  });
});

/** A batch's rows by docflow state, and when a batch counts as registered. */
import { describe, expect, it } from 'vitest';
import { createStateTally, describeStates } from '../../src/outcomes/state-tally.js';
import type { OutcomeRecord } from '../../src/domain/outcome.js';

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

describe('describeStates: the states in one line', () => {
  const at = Date.parse('2026-11-24T12:00:00.000Z');

  it('lists the states in the order of a docflow life, zeros left out, what the suspended ones wait for, and the oldest row', () => {
    expect(
      describeStates(
        {
          states: { completed: 40, error: 0, suspended: 3, sent: 12, unknown: 2 },
          waitingFor: { payment: 2, signature: 1 },
          oldestUnfinished: { row: 7, since: '2026-11-20T10:00:00.000Z' },
        },
        at,
      ),
    ).toBe(
      'not shown by the news feed yet 2, sent 12, suspended 3 (payment 2, signature 1), completed 40; oldest unfinished: row 7, since 2026-11-20T10:00:00.000Z (4d 2h)',
    );
  });

  it('says nothing when no docflow is there, and the age in hours, minutes or seconds', () => {
    expect(describeStates({ states: {}, waitingFor: {} }, at)).toBe('');
    expect(describeStates({ states: { queued: 0 }, waitingFor: {} }, at)).toBe('');
    expect(describeStates({ states: { error: 1, completed: 2 }, waitingFor: {} }, at)).toBe('completed 2, error 1');
    const since = (ms: number) => ({
      states: { queued: 1 },
      waitingFor: {},
      oldestUnfinished: { row: 2, since: new Date(at - ms).toISOString() },
    });
    expect(describeStates(since((3 * 3600 + 12 * 60) * 1000), at)).toMatch(/\(3h 12m\)$/);
    expect(describeStates(since(12 * 60 * 1000 + 5000), at)).toMatch(/\(12m\)$/);
    expect(describeStates(since(40_000), at)).toMatch(/^queued 1; oldest unfinished: row 2, since .* \(40s\)$/);
    // A suspended docflow whose requirement is not known yet: no empty brackets.
    expect(describeStates({ states: { suspended: 1 }, waitingFor: {} }, at)).toBe('suspended 1');
  });
});

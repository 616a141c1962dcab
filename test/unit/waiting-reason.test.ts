import { describe, expect, it } from 'vitest';
import { delayedScoreTime, waitingReason } from '../../src/batch/waiting-rows.js';
import { deadlineHint, deadlineMessage } from '../../src/results/deadline-hint.js';

describe('why a row waits, and what a row left at the deadline says', () => {
  it("reads the next try's time from BullMQ's delayed score (time × 4096 + a counter)", () => {
    const at = Date.UTC(2026, 10, 25, 3, 0, 0);
    expect(delayedScoreTime(at * 0x1000)).toBe(at);
    expect(delayedScoreTime(at * 0x1000 + 4095)).toBe(at);
  });

  it('names the failed try first, then the feed, another row or the breaker', () => {
    expect(waitingReason({ row: 1, dealId: 'd', attempts: 3, failedReason: '501: egronUnavailable: not supported' })).toBe(
      'try 3 failed: 501: egronUnavailable: not supported',
    );
    expect(waitingReason({ row: 1, dealId: 'd', attempts: 8, exhausted: { errorMessage: '503: busy' }, failedReason: '503: busy' })).toBe(
      'no tries left (503: busy); the news feed is asked whether the last one made a docflow',
    );
    expect(waitingReason({ row: 1, dealId: 'd', attempts: 0, waits: 2 })).toMatch(/^another row holds this deal/);
    expect(waitingReason({ row: 1, dealId: 'd', attempts: 0, holds: 1 })).toMatch(/circuit breaker open/);
    expect(waitingReason({ row: 1, dealId: 'd', attempts: 0 })).toBe('waiting for its batch to finish loading');
    // One line, however long the gateway's message.
    expect(waitingReason({ row: 1, dealId: 'd', attempts: 1, failedReason: 'x'.repeat(1000) }).length).toBe(240);
  });

  it('says in both languages that the job stays in the queue and what to run, and why the row waits', () => {
    expect(deadlineHint('night', 'en')).toContain('realty-batch work (or run again with --batch night), then realty-batch results night');
    expect(deadlineHint('night', 'ru')).toContain('realty-batch work (или run с --batch night), затем realty-batch results night');
    expect(deadlineMessage({ reason: 'try 1 failed: 501: x', nextTryAt: '2026-11-25T03:00:00.000Z' })).toBe(
      "waiting: try 1 failed: 501: x; next try 2026-11-25T03:00:00.000Z; the run stopped at its --deadline and the row's job stays in the queue",
    );
    expect(deadlineMessage(undefined)).toBe("not finished; the run stopped at its --deadline and the row's job stays in the queue");
  });
});

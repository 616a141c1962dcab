import { describe, expect, it } from 'vitest';
import { formatDuration, formatEta, formatRate, formatRunLine, formatWaiting, rowsPerSecond } from '../../src/cli/progress-format.js';

const clock = (at: Date) => [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');

describe('the progress bar and the summary', () => {
  it('gives rows per second over the running time, never NaN or Infinity', () => {
    expect(rowsPerSecond(29, 58_000)).toBe(0.5);
    expect(rowsPerSecond(300, 2_000)).toBe(150);
    expect(rowsPerSecond(0, 0)).toBe(0);
    expect(rowsPerSecond(5, 0)).toBe(0);
    expect(rowsPerSecond(Number.NaN, 1000)).toBe(0);
    expect(formatRate(29, 58_000)).toBe('0.5 rows/s');
    expect(formatRate(0, 0)).toBe('0 rows/s');
    expect(formatRate(1, 3600_000)).toBe('< 0.1 rows/s');
  });

  it('gives the time left as a duration, or — when there is no pace or every unfinished row waits for a retry, never NF', () => {
    expect(formatEta(10, 20, 10_000)).toBe('5s');
    expect(formatEta(600, 1, 1000)).toBe('10m 00s');
    expect(formatEta(10, 0, 5000)).toBe('—');
    expect(formatEta(10, 5, 0)).toBe('—');
    expect(formatEta(1, 29, 58_000, 1)).toBe('—');
    expect(formatEta(0, 29, 58_000)).toBe('0s');
    // Three rows left, one of them waiting: the pace covers the other two.
    expect(formatEta(3, 10, 10_000, 1)).toBe('2s');
  });

  it('writes durations as a person reads them', () => {
    expect(formatDuration(4_000)).toBe('4s');
    expect(formatDuration(250_000)).toBe('4m 10s');
    expect(formatDuration(2 * 3600_000 + 3 * 60_000)).toBe('2h 03m');
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe('—');
    expect(formatDuration(Number.NaN)).toBe('—');
  });

  it('shows the rows waiting for a retry and when the next try is', () => {
    const now = new Date(2026, 10, 24, 21, 44, 0).getTime();
    const next = new Date(2026, 10, 24, 21, 48, 10);
    expect(formatWaiting({ count: 1, nextAt: next.getTime() }, now)).toBe(`1 waiting for a retry, next try ${clock(next)} (in 4m 10s)`);
    expect(formatWaiting({ count: 3, nextAt: now }, now)).toBe(`3 waiting for a retry, next try ${clock(new Date(now))} (due now)`);
    expect(formatWaiting({ count: 0 }, now)).toBe('');
    expect(formatWaiting(undefined, now)).toBe('');
  });

  it('puts it together after the bar: the issue’s 29 of 30 rows with one waiting', () => {
    const now = new Date(2026, 10, 24, 21, 44, 0).getTime();
    const next = new Date(2026, 10, 24, 21, 48, 10);
    const line = formatRunLine({
      done: 29,
      total: 30,
      rowsThisRun: 29,
      runningMs: 58_000,
      waiting: { count: 1, nextAt: next.getTime() },
      now,
    });
    expect(line).toBe(`29/30 rows | 0.5 rows/s | ETA — | 1 waiting for a retry, next try ${clock(next)} (in 4m 10s)`);
    expect(formatRunLine({ done: 0, total: 30, rowsThisRun: 0, runningMs: 0, now })).toBe('0/30 rows | 0 rows/s | ETA —');
    expect(line).not.toMatch(/NaN|Infinity|NF/);
  });
});

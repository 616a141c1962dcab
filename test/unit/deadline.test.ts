import { describe, expect, it } from 'vitest';
import { parseDeadline } from '../../src/batch/deadline.js';
import { UsageError } from '../../src/errors.js';

// Local times built with the Date constructor: the tests hold in any TZ the machine has.
const NOW = new Date(2026, 10, 24, 22, 30, 0);

describe('--deadline', () => {
  it('reads a duration from now: seconds, minutes, hours, and several together', () => {
    expect(parseDeadline('90s', NOW)).toBe(NOW.getTime() + 90_000);
    expect(parseDeadline('45m', NOW)).toBe(NOW.getTime() + 45 * 60_000);
    expect(parseDeadline('2h', NOW)).toBe(NOW.getTime() + 2 * 3600_000);
    expect(parseDeadline('1h30m', NOW)).toBe(NOW.getTime() + 90 * 60_000);
    expect(parseDeadline(' 3s ', NOW)).toBe(NOW.getTime() + 3000);
  });

  it('reads a clock time as the next one to come: later today, or tomorrow when it has passed', () => {
    expect(parseDeadline('23:15', NOW)).toBe(new Date(2026, 10, 24, 23, 15, 0).getTime());
    expect(parseDeadline('06:00', NOW)).toBe(new Date(2026, 10, 25, 6, 0, 0).getTime());
    expect(parseDeadline('6:00:30', NOW)).toBe(new Date(2026, 10, 25, 6, 0, 30).getTime());
    // Exactly now is not to come: tomorrow's.
    expect(parseDeadline('22:30', NOW)).toBe(new Date(2026, 10, 25, 22, 30, 0).getTime());
  });

  it('reads an ISO time as local time unless it names a zone', () => {
    expect(parseDeadline('2026-11-25T06:00', NOW)).toBe(new Date(2026, 10, 25, 6, 0, 0).getTime());
    expect(parseDeadline('2026-11-25 06:00:15', NOW)).toBe(new Date(2026, 10, 25, 6, 0, 15).getTime());
    expect(parseDeadline('2030-11-25T06:00Z', NOW)).toBe(Date.UTC(2030, 10, 25, 6, 0, 0));
    expect(parseDeadline('2030-11-25T06:00+03:00', NOW)).toBe(Date.UTC(2030, 10, 25, 3, 0, 0));
    expect(parseDeadline('2030-11-25T06:00+0300', NOW)).toBe(Date.UTC(2030, 10, 25, 3, 0, 0));
  });

  it.each([
    ['tomorrow', 'is not a time, a clock time or a duration'],
    ['', 'is not a time, a clock time or a duration'],
    ['45', 'is not a time, a clock time or a duration'],
    ['-5m', 'is not a time, a clock time or a duration'],
    ['0s', 'is no time at all'],
    ['25:00', 'is not a clock time'],
    ['06:61', 'is not a clock time'],
    ['2026-02-30T06:00', 'is not a date and time'],
    ['2026-13-01T06:00', 'is not a date and time'],
    ['2026-11-20T06:00', 'is already past'],
  ])('refuses %j in one sentence (%s), a usage error (exit 2)', (value, why) => {
    let thrown: unknown;
    try {
      parseDeadline(value, NOW);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    const message = (thrown as UsageError).message;
    expect(message).toContain(`--deadline ${JSON.stringify(value)} ${why}`);
    expect(message.split('\n')).toHaveLength(1);
    expect((thrown as UsageError).exitCode).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import { parseDeadline, parseTickDeadline } from '../../src/batch/deadline.js';
import { tickDeadline } from '../../src/schedule/scheduler.js';
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

describe("a schedule's --deadline", () => {
  it('keeps a clock time or a duration, and refuses a date: a schedule runs every night', () => {
    expect(parseTickDeadline('06:00')).toEqual({ at: [6, 0, 0] });
    expect(parseTickDeadline('5h')).toEqual({ afterMs: 5 * 3600_000 });
    expect(() => parseTickDeadline('2026-11-25T06:00')).toThrow(/is a date, and a schedule runs every night/);
    expect(() => parseTickDeadline('soon')).toThrow(UsageError);
  });

  it("reckons each tick's deadline from its start: the next such clock time in the schedule's zone, or the duration after it", () => {
    // A tick at 01:30 Moscow (22:30 UTC the evening before) must end by 06:00 Moscow, 03:00 UTC.
    const tick = new Date(Date.UTC(2026, 10, 24, 22, 30, 0));
    expect(tickDeadline({ at: [6, 0, 0] }, tick, 'Europe/Moscow')).toBe(Date.UTC(2026, 10, 25, 3, 0, 0));
    // In Vladivostok (UTC+10) it is already 08:30 on the 25th: the next 06:00 is on the 26th.
    expect(tickDeadline({ at: [6, 0, 0] }, tick, 'Asia/Vladivostok')).toBe(Date.UTC(2026, 10, 25, 20, 0, 0));
    expect(tickDeadline({ afterMs: 3600_000 }, tick, 'Europe/Moscow')).toBe(tick.getTime() + 3600_000);
  });
});

/**
 * `--deadline`: when a wait for a batch's rows gives up, so that a night ends before the
 * bank's morning. A time (`2026-11-25T06:00`, local unless it names a zone), a clock time
 * (`06:00`, the next one to come) or a duration from now (`45m`, `2h`, `90s`, `1h30m`).
 */
import { UsageError } from '../errors.js';

const SECOND = 1000;
const UNIT_MS: Record<string, number> = { ms: 1, s: SECOND, m: 60 * SECOND, h: 3600 * SECOND, d: 24 * 3600 * SECOND };

const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const CLOCK = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

const HELP = 'give a time (2026-11-25T06:00, local unless it ends in Z or +03:00), a clock time (06:00) or a duration (45m, 2h, 90s)';

/** A duration's ms (`45m`, `1h30m`), or undefined when the value is no duration. */
function durationMs(value: string, refuse: (why: string) => UsageError): number | undefined {
  if (!DURATION.test(value)) return undefined;
  let ms = 0;
  for (const [, n, unit] of value.matchAll(DURATION_PART)) ms += Number(n) * UNIT_MS[unit!]!;
  if (!(ms >= 1)) throw refuse('is no time at all');
  return Math.round(ms);
}

/** A clock time's hours, minutes and seconds, or undefined when the value is no clock time. */
function clockTime(value: string, refuse: (why: string) => UsageError): [number, number, number] | undefined {
  const clock = CLOCK.exec(value);
  if (!clock) return undefined;
  const [h, m, s] = [Number(clock[1]), Number(clock[2]), Number(clock[3] ?? 0)];
  if (h > 23 || m > 59 || s > 59) throw refuse('is not a clock time');
  return [h, m, s];
}

/**
 * A nightly schedule's deadline, kept with the schedule and reckoned at each tick: a duration
 * from the tick's start, or a clock time (`06:00`), the next one after the tick's start in the
 * schedule's zone. A date would pass after one night: refused.
 */
export type TickDeadline = { afterMs: number } | { at: [number, number, number] };

export function parseTickDeadline(text: string): TickDeadline {
  const value = text.trim();
  const refuse = (why: string) =>
    new UsageError(
      `--deadline ${JSON.stringify(text)} ${why}: a schedule's deadline is a clock time (06:00, in its --tz) or a duration from each tick's start (45m, 2h).`,
    );
  const ms = durationMs(value, refuse);
  if (ms !== undefined) return { afterMs: ms };
  const clock = clockTime(value, refuse);
  if (clock) return { at: clock };
  throw refuse(ISO.test(value) ? 'is a date, and a schedule runs every night' : 'is not a clock time or a duration');
}

/** The deadline as ms since the epoch; a value that is none of the three, or a time already past, is refused in one sentence. */
export function parseDeadline(text: string, now: Date = new Date()): number {
  const value = text.trim();
  const refuse = (why: string) => new UsageError(`--deadline ${JSON.stringify(text)} ${why}: ${HELP}.`);
  const ms = durationMs(value, refuse);
  if (ms !== undefined) return now.getTime() + ms;
  const clock = clockTime(value, refuse);
  if (clock) {
    const [h, m, s] = clock;
    const at = new Date(now.getFullYear(), now.getMonth(), now.getDate(), h, m, s);
    // The next such time: today's when it is still to come, else tomorrow's.
    if (at.getTime() <= now.getTime()) at.setDate(at.getDate() + 1);
    return at.getTime();
  }
  const iso = ISO.exec(value);
  if (iso) {
    const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(iso[i] ?? 0)) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    // Date would roll 2026-02-30 over to March 2: a day the calendar lacks is refused.
    const probe = new Date(Date.UTC(year, month - 1, day));
    if (probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59)
      throw refuse('is not a date and time');
    // Without a zone, ECMAScript reads a date-time as local time, which is what is meant.
    const at = Date.parse(value.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    if (Number.isNaN(at)) throw refuse('is not a date and time');
    if (at <= now.getTime()) throw new UsageError(`--deadline ${JSON.stringify(text)} is already past (it is ${now.toISOString()} now).`);
    return at;
  }
  throw refuse('is not a time, a clock time or a duration');
}

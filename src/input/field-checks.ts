/**
 * Field checks shared by deal records and the bank profile: each takes a trimmed,
 * non-empty string and yields the value the API wants, or one problem message.
 * Messages name the expected form, never the value (it may be personal data).
 *
 * A check is a plain function, called directly for the cells of a deals file (a
 * million rows of thirty cells: a zod parse per cell was a fifth of a load's
 * allocations), and wrapped in a zod schema for the profile's object schemas.
 */
import * as z from 'zod';
import { CADASTRAL_NUMBER } from '../domain/gateway.js';
import { isValidSnils, snilsDigits } from './checksums.js';

/** A trimmed, non-empty string in, `T` out. */
export type FieldSchema<T> = z.ZodType<T, string>;

/** One field's check, as a function and as a zod schema (made when first asked for). */
export interface Field<T> {
  readonly check: (value: string) => T | Problem;
  readonly schema: FieldSchema<T>;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const MESSAGES = {
  required: 'is required',
  date: 'must be a real date (YYYY-MM-DD or DD.MM.YYYY)',
  // 1C writes an empty date as 01.01.0001: a date that old is a missing one.
  tooOld: 'must not be before 1900-01-01',
  future: 'must not be in the future',
  snilsFormat: 'must be 11 digits (separators - and space allowed)',
  checksum: 'checksum does not match',
  uuid: 'must be a UUID',
} as const;

const EARLIEST_DATE = '1900-01-01';
const MAX_TEXT_LENGTH = 500;

/** `fn` returns the converted value, or a `Problem` that becomes the field's one issue. */
export class Problem {
  constructor(readonly message: string) {}
}
export const problem = (message: string): Problem => new Problem(message);

export function convert<T>(fn: (value: string) => T | Problem): Field<T> {
  let schema: FieldSchema<T> | undefined;
  return {
    check: fn,
    get schema(): FieldSchema<T> {
      schema ??= z.string().transform((value, ctx) => {
        const result = fn(value);
        if (result instanceof Problem) {
          ctx.addIssue({ code: 'custom', message: result.message });
          return z.NEVER;
        }
        return result;
      });
      return schema;
    },
  };
}

/** Free text: names, places, issuers. */
export const text = convert((value) => (value.length > MAX_TEXT_LENGTH ? problem(`must be at most ${MAX_TEXT_LENGTH} characters`) : value));

/** One of `values`, matched case-insensitively, yielding the canonical spelling. */
export function oneOf<const T extends string>(values: readonly T[]): Field<T> {
  const byLowerCase = new Map(values.map((v) => [v.toLowerCase(), v]));
  const message = `must be one of ${values.join(', ')}`;
  return convert((value) => byLowerCase.get(value.toLowerCase()) ?? problem(message));
}

const daysInMonth = (year: number, month: number): number =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;

/** `YYYY-MM-DD` or `DD.MM.YYYY` as `YYYY-MM-DD` when it is a real calendar date. */
export function toIsoDate(value: string): string | undefined {
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const ru = iso ? undefined : /^(\d{2})\.(\d{2})\.(\d{4})$/.exec(value);
  const [year, month, day] = iso ? [iso[1], iso[2], iso[3]] : ru ? [ru[3], ru[2], ru[1]] : [];
  if (year === undefined || month === undefined || day === undefined) return undefined;
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return undefined;
  return `${year}-${month}-${day}`;
}

/** The calendar date of `date` where this process runs, as `YYYY-MM-DD`. */
export function localIsoDate(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${String(date.getFullYear()).padStart(4, '0')}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** A real date from 1900 up to `today` (`YYYY-MM-DD`), yielding `YYYY-MM-DD`. */
export function pastDate(today: string): Field<string> {
  return convert((value) => {
    const iso = toIsoDate(value);
    if (iso === undefined) return problem(MESSAGES.date);
    if (iso < EARLIEST_DATE) return problem(MESSAGES.tooOld);
    return iso > today ? problem(MESSAGES.future) : iso;
  });
}

/** SNILS with checksum, yielding its 11 digits. */
export const snils = convert((value) => {
  const digits = snilsDigits(value);
  if (digits === undefined) return problem(MESSAGES.snilsFormat);
  return isValidSnils(digits) ? digits : problem(MESSAGES.checksum);
});

const GENDERS: Readonly<Record<string, 'male' | 'female'>> = {
  male: 'male',
  female: 'female',
  м: 'male',
  ж: 'female',
  m: 'male',
  f: 'female',
};
export const gender = convert((value) => GENDERS[value.toLowerCase()] ?? problem('must be male or female (or м/ж, M/F)'));

export const uuid = convert((value) => (UUID.test(value) ? value : problem(MESSAGES.uuid)));

export const cadastralNumber = convert((value) =>
  CADASTRAL_NUMBER.test(value) ? value : problem('must be a cadastral number AA:BB:CCCCCC[C]:N'),
);

/** A positive decimal with `.` or `,` (Excel may group thousands with spaces), yielding it with `.`. */
export const positiveDecimal = convert((value) => {
  const compact = value.replace(/[\s\u00a0\u202f]/g, '');
  if (!/^\d+(?:[.,]\d+)?$/.test(compact) || !(Number(compact.replace(',', '.')) > 0)) {
    return problem('must be a positive decimal number (45.6 or 45,6)');
  }
  return compact.replace(',', '.');
});

/** Issuer (department) code `NNN-NNN` or `NNNNNN`, yielding `NNN-NNN`. */
export const issuerCode = convert((value) => {
  const match = /^(\d{3})-?(\d{3})$/.exec(value);
  return match ? `${match[1]}-${match[2]}` : problem('must be NNN-NNN or NNNNNN');
});

/** Digits of a Russian passport's series (4) or number (6), spaces allowed, yielding the digits. */
export function passportDigits(count: number, part: 'series' | 'number'): Field<string> {
  const pattern = new RegExp(`^\\d{${count}}$`);
  return convert((value) => {
    const digits = value.replace(/\s/g, '');
    return pattern.test(digits) ? digits : problem(`must be ${count} digits for a russPassport ${part}`);
  });
}
export const passportSeries = passportDigits(4, 'series');
export const passportNumber = passportDigits(6, 'number');

/** The converted value, or the field's problem. */
export function parseField<T>(field: Field<T>, value: string): { ok: true; value: T } | { ok: false; message: string } {
  const result = field.check(value);
  return result instanceof Problem ? { ok: false, message: result.message } : { ok: true, value: result };
}

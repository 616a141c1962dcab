/**
 * Reads one record's fields, each through its check, collecting one problem per field that
 * fails: the validator of the object and owners (validate-deal.ts) and each docflow type's own
 * columns (src/docflows/) read a record through it.
 */
import type { FieldProblem } from '../domain/deal.js';
import { MESSAGES, Problem, type Field } from './field-checks.js';

/** Canonical field name → raw value; `''` is absent. Unknown keys are ignored. */
export type DealRecord = Readonly<Record<string, string | undefined>>;

/** Reads the fields of one record, collecting one problem per field that fails. */
export class RecordReader {
  readonly problems: FieldProblem[] = [];

  constructor(private readonly record: DealRecord) {}

  raw(field: string): string | undefined {
    const value = this.record[field];
    // JSON records may carry numbers (`"house": 14`); they are read as their text.
    const trimmed = typeof value === 'string' ? value.trim() : value == null ? '' : String(value).trim();
    return trimmed === '' ? undefined : trimmed;
  }

  has(field: string): boolean {
    return this.raw(field) !== undefined;
  }

  report(field: string, message: string): void {
    this.problems.push({ field, message });
  }

  optional<T>(field: string, check: Field<T>): T | undefined {
    const raw = this.raw(field);
    return raw === undefined ? undefined : this.checked(field, check, raw);
  }

  required<T>(field: string, check: Field<T>): T | undefined {
    const raw = this.raw(field);
    if (raw !== undefined) return this.checked(field, check, raw);
    this.report(field, MESSAGES.required);
    return undefined;
  }

  withDefault<T>(field: string, check: Field<T>, fallback: T): T | undefined {
    const raw = this.raw(field);
    return raw === undefined ? fallback : this.checked(field, check, raw);
  }

  private checked<T>(field: string, check: Field<T>, raw: string): T | undefined {
    const result = check.check(raw);
    if (!(result instanceof Problem)) return result;
    this.report(field, result.message);
    return undefined;
  }
}

/** What a reader has read so far: any value may still be missing. */
export type Draft<T> = { [K in keyof T]: T[K] | undefined };

export function withoutUndefined<T extends object>(value: T): T {
  const defined: Record<string, unknown> = {};
  for (const key in value) if (value[key] !== undefined) defined[key] = value[key];
  return defined as T;
}

/**
 * The draft as a `T` when nothing was reported since `problemsBefore`: every
 * required value was then read, so only optional ones can be undefined (and are dropped).
 */
export function complete<T extends object>(reader: RecordReader, problemsBefore: number, draft: Draft<T>): T | undefined {
  return reader.problems.length === problemsBefore ? withoutUndefined(draft as T) : undefined;
}

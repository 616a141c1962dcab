/**
 * An outcome as the batch's outcomes hash keeps it (one field a row, the row number its
 * name): a JSON array, by position, not an object with its key names. The names
 * (`"cadastralNumber":`, `"finishedAt":` ...) were about 90 of a queued row's 190 bytes, and
 * the row number was written twice; with the finish time as ms the value fits Redis' 112-byte
 * allocation instead of its 224 (about 110 bytes a row: 22 MB a night of 200,000 rows).
 *
 * Positions (append only: outcomes already in Redis are read by them, here and in the Lua of
 * src/ledger/lua.ts): dealId, outcome, docflowId, cadastralNumber, httpStatus, attempts,
 * finishedAt (ms, or the text when it is not an ISO time this writes back the same),
 * errorCode, errorMessage, candidates. Absent fields are null; trailing ones are left out.
 * Outcomes written by earlier versions are objects, and are read as they were written.
 */
import type { OutcomeRecord } from './types.js';

/** The stored form of an outcome (the row is the hash field's name). */
export function encodeOutcome(r: OutcomeRecord): string {
  const at = Date.parse(r.finishedAt);
  const finishedAt = Number.isFinite(at) && new Date(at).toISOString() === r.finishedAt ? at : r.finishedAt;
  const values: unknown[] = [
    r.dealId,
    r.outcome,
    r.docflowId ?? null,
    r.cadastralNumber ?? null,
    r.httpStatus ?? null,
    r.attempts,
    finishedAt,
    r.errorCode ?? null,
    r.errorMessage ?? null,
    r.candidates ?? null,
  ];
  let end = values.length;
  while (end > 7 && values[end - 1] === null) end--;
  values.length = end;
  return JSON.stringify(values);
}

/** Row `row`'s outcome from its stored form (either form). */
export function decodeOutcome(raw: string, row: number): OutcomeRecord {
  if (raw.charCodeAt(0) !== 0x5b /* [ */) return JSON.parse(raw) as OutcomeRecord;
  const v = JSON.parse(raw) as unknown[];
  const finishedAt = v[6] as number | string | null | undefined;
  const record: OutcomeRecord = {
    row,
    dealId: v[0] as string,
    outcome: v[1] as OutcomeRecord['outcome'],
    attempts: (v[5] as number | null) ?? 0,
    finishedAt: typeof finishedAt === 'number' ? new Date(finishedAt).toISOString() : (finishedAt ?? ''),
  };
  if (v[2] != null) record.docflowId = v[2] as string;
  if (v[3] != null) record.cadastralNumber = v[3] as string;
  if (v[4] != null) record.httpStatus = v[4] as number;
  if (v[7] != null) record.errorCode = v[7] as string;
  if (v[8] != null) record.errorMessage = v[8] as string;
  if (v[9] != null) record.candidates = v[9] as string[];
  return record;
}

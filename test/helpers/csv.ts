/** Reading the tool's CSV files in tests: results are plain (`,`), attention files Russian Excel's (`;`, BOM). */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { readCell } from '../../src/input/csv-cell.js';
import { RESULT_COLUMNS } from '../../src/domain/outcome.js';

export type CsvRow = Record<string, string>;

/** A CSV file's rows by header, the delimiter read from the header line. */
export function readCsvFile(file: string): CsvRow[] {
  const bytes = readFileSync(file);
  const header = bytes.toString('utf8').split(/\r?\n/, 1)[0]!;
  // Cells as the tool reads them back: an id Excel would turn into a number is written `="…"` (csv-cell.ts).
  return parse(bytes, {
    columns: true,
    bom: true,
    delimiter: header.includes(';') ? ';' : ',',
    cast: (value) => readCell(value),
  }) as CsvRow[];
}

/**
 * A results line's outcome, without what differs between two runs of the same rows: the
 * docflow's id and the time, the registry's state (it moves on by the registry's clock), and
 * for a submitted row how its docflow became known (the answer, or the news feed when a
 * loaded machine's worker lost its job's lock mid-call): the same docflow either way.
 */
export function runOutcome(row: CsvRow): CsvRow {
  const outcome = Object.fromEntries(RESULT_COLUMNS.filter((c) => c !== 'docflowId' && c !== 'finishedAt').map((c) => [c, row[c] ?? '']));
  return outcome.outcome === 'queued' || outcome.outcome === 'suspended' ? { ...outcome, errorMessage: '' } : outcome;
}

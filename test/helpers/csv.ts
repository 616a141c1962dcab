/** Reading the tool's CSV files in tests: results are plain (`,`), attention files Russian Excel's (`;`, BOM). */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';

export type CsvRow = Record<string, string>;

/** A CSV file's rows by header, the delimiter read from the header line. */
export function readCsvFile(file: string): CsvRow[] {
  const bytes = readFileSync(file);
  const header = bytes.toString('utf8').split(/\r?\n/, 1)[0]!;
  return parse(bytes, { columns: true, bom: true, delimiter: header.includes(';') ? ';' : ',' }) as CsvRow[];
}

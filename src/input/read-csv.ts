/**
 * Reads a CSV export as a stream of records keyed by canonical field names.
 * This is the spine's reader: UTF-8 (with or without BOM), `,` `;` or tab.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { parse, CsvError } from 'csv-parse';
import { InputError } from '../errors.js';
import { canonicalFieldName } from './fields.js';

export interface InputRecord {
  /** 1-based position in the input, header not counted. */
  row: number;
  /** Canonical field → raw value, for the fields the header names. */
  fields: Record<string, string>;
  /** Set when the record itself is broken (wrong number of cells): it becomes `invalid`. */
  structureProblem?: string;
}

export interface CsvHeader {
  delimiter: string;
  /** Columns the loader does not know, listed once in the summary. */
  unknownColumns: string[];
}

const DELIMITERS = [',', ';', '\t'] as const;

/** The delimiter that occurs most often, outside quotes, in the first line. */
export async function detectDelimiter(file: string): Promise<string> {
  const handle = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new InputError(`${file} cannot be read (${err.code ?? err.message}).`, { cause: err });
  });
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString('utf8');
    let inQuotes = false;
    const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
    for (const ch of text) {
      if (ch === '"') inQuotes = !inQuotes;
      else if (!inQuotes && (ch === '\n' || ch === '\r')) break;
      else if (!inQuotes && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
    }
    const [best] = [...counts.entries()].sort((a, b) => b[1] - a[1]);
    return best && best[1] > 0 ? best[0] : ',';
  } finally {
    await handle.close();
  }
}

export async function* readCsv(file: string, onHeader?: (header: CsvHeader) => void): AsyncGenerator<InputRecord> {
  const delimiter = await detectDelimiter(file);
  const parser = createReadStream(file).pipe(
    parse({ bom: true, delimiter, relax_column_count: true, skip_empty_lines: true, trim: false }),
  );
  let columns: Array<string | undefined> | undefined;
  let row = 0;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      if (!columns) {
        columns = cells.map((h) => canonicalFieldName(h));
        const unknownColumns = cells.filter((h, i) => columns![i] === undefined && h.trim() !== '' && h.trim().toLowerCase() !== 'errors');
        const known = columns.filter((c): c is string => c !== undefined);
        if (known.length === 0) throw new InputError(`${file} has no header row with known field names (the first line is read as the header).`);
        onHeader?.({ delimiter, unknownColumns });
        continue;
      }
      row++;
      // A line with only delimiters (Excel pads blank rows) is blank, not a record.
      if (cells.every((c) => c.trim() === '')) {
        row--;
        continue;
      }
      const fields: Record<string, string> = {};
      columns.forEach((name, i) => {
        if (name !== undefined) fields[name] = cells[i] ?? '';
      });
      const record: InputRecord = { row, fields };
      if (cells.length !== columns.length) {
        record.structureProblem = `has ${cells.length} cells where the header has ${columns.length}`;
      }
      yield record;
    }
  } catch (err) {
    if (err instanceof CsvError) {
      throw new InputError(`${file} cannot be read as CSV near line ${err.lines ?? '?'}: ${err.message.replace(/^Invalid Record Length: |^Invalid Opening Quote: /, '')}`, { cause: err });
    }
    throw err;
  }
  if (!columns) throw new InputError(`${file} is empty: a header row and at least one record are expected.`);
}

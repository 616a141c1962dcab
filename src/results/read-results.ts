/**
 * A results file read back (`realty-batch ledger import`): the CSV the tool writes (`,` and LF,
 * or `--excel`'s BOM, `;` and CRLF, cells a spreadsheet would run defused with a `'`) or its
 * JSONL form, one object a row, as the column names and each row's cells as text. A file
 * written for a Russian reader (`--excel --lang ru`) reads as the same file in English: its
 * headers as the column names, its outcome, state and requirement names as the codes (russian.ts).
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { readCell } from '../input/csv-cell.js';
import { InputError } from '../errors.js';
import { codesOfColumn, columnOfHeader } from './russian.js';

export interface ResultsLine {
  /** The line's number in the file, the header being line 1 of a CSV. */
  line: number;
  cells: Readonly<Record<string, string>>;
}

export interface ResultsFileReader {
  /** The file's columns (a JSONL file's: the first row's keys). */
  columns(): Promise<readonly string[]>;
  lines(): AsyncGenerator<ResultsLine>;
}

const BOM = '\uFEFF';

/** The delimiter of a CSV header: `--excel` files have `;`, the others `,`. */
async function csvDelimiter(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    const head = buffer.subarray(0, bytesRead).toString('utf8').replace(BOM, '').split(/\r?\n/, 1)[0] ?? '';
    return head.includes(';') && !head.includes(',') ? ';' : ',';
  } finally {
    await handle.close();
  }
}

const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

export function readResultsFile(file: string): ResultsFileReader {
  if (file.endsWith('.jsonl')) return jsonlReader(file);
  let header: string[] | undefined;
  const lines = async function* (): AsyncGenerator<ResultsLine> {
    const parser = createReadStream(file).pipe(
      parse({ bom: true, delimiter: await csvDelimiter(file), relax_column_count: true, skip_empty_lines: true, info: true }),
    );
    // Each read starts at the file's first line, its header.
    let columns: string[] | undefined;
    let codes: Array<ReadonlyMap<string, string> | undefined> = [];
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!columns) {
        header = columns = record.map((h) => columnOfHeader(h.trim()));
        codes = columns.map(codesOfColumn);
        continue;
      }
      const cells: Record<string, string> = {};
      columns.forEach((h, i) => {
        const cell = readCell(record[i] ?? '');
        cells[h] = codes[i]?.get(cell.trim().toLowerCase()) ?? cell;
      });
      yield { line: info.lines, cells };
    }
  };
  return {
    async columns() {
      if (!header) for await (const _ of lines()) break;
      return header ?? [];
    },
    lines,
  };
}

function jsonlReader(file: string): ResultsFileReader {
  const lines = async function* (): AsyncGenerator<ResultsLine> {
    let n = 0;
    for await (const raw of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
      n++;
      if (raw.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        throw new InputError(`${file}, line ${n}: not a JSON object (a results file in JSONL has one a line).`);
      }
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        throw new InputError(`${file}, line ${n}: not a JSON object (a results file in JSONL has one a line).`);
      yield { line: n, cells: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, text(v)])) };
    }
  };
  return {
    async columns() {
      for await (const first of lines()) return Object.keys(first.cells);
      return [];
    },
    lines,
  };
}

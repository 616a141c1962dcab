/**
 * Opens a deals export of any accepted kind (CSV, JSON, JSON Lines; UTF-8, UTF-8
 * with BOM or Windows-1251; an Excel workbook, read-xlsx.ts) and streams its records keyed by canonical field
 * names, each with what is needed to write it back unchanged into a rejects file.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { CsvError, parse } from 'csv-parse';
import { InputError, UsageError } from '../errors.js';
import type { FieldProblem } from '../domain/deal.js';
import { createCheckedBytes, createDecoder, detectEncoding, type InputEncoding } from './decode.js';
import { readCell } from './csv-cell.js';
import { CsvLineGuard, MAX_LINE_BYTES, oversizedOf, type OversizedLine } from './csv-line-guard.js';
import { applyDefaults, OWN_COLUMNS, headerKey, resolveHeader, type Mapping } from './mapping.js';
import { flattenRecord, readJsonLines, readJsonRecords } from './read-json.js';
import { unreadableFields } from './unreadable.js';
import { readXlsx } from './read-xlsx.js';
import { sniffCsv, type Sniffed } from './sniff-csv.js';

export const INPUT_FORMATS = ['csv', 'json', 'jsonl', 'xlsx'] as const;
export type InputFormat = (typeof INPUT_FORMATS)[number];

export interface InputOptions {
  /** Undefined: from the extension. */
  format?: InputFormat;
  /** Undefined: detected among UTF-8, UTF-8 with BOM and Windows-1251. */
  encoding?: InputEncoding;
  /** CSV only. Undefined: detected among `,` `;` and tab. */
  delimiter?: string;
  mapping?: Mapping;
  /** xlsx only: the sheet by name. Undefined: the first sheet. */
  sheet?: string;
  /** The docflow type's own columns (src/docflows/), known beside the canonical fields. */
  columns?: readonly string[];
}

/** The record as the file had it: CSV cells, or a JSON record's text. */
export type RawRecord = { kind: 'cells'; cells: string[] } | { kind: 'json'; text: string; value?: Record<string, unknown> };

export interface InputRecord {
  /** 1-based position in the input, header not counted. */
  row: number;
  /**
   * Canonical field → raw value; the mapping's defaults filled in. Empty for a
   * record that cannot be read (see unreadable.ts): none of its text becomes a field.
   */
  fields: Record<string, string>;
  /** CSV: the cells as values (an apostrophe the tool added taken off again, csv-cell.ts). */
  raw: RawRecord;
  /** Problems of the record's shape (cell count, broken JSON line, nested values): it is invalid. */
  problems: FieldProblem[];
}

export interface InputFile {
  file: string;
  format: InputFormat;
  encoding: InputEncoding;
  /** CSV: the delimiter used; the rejects file uses it too. */
  delimiter: string;
  /** CSV: the line ending of the header line, kept in the rejects file. */
  lineEnding: '\n' | '\r\n';
  /** xlsx: the sheet asked for (undefined: the first). */
  sheet?: string;
  /** Bytes in the file, and read so far: progress and ETA. */
  size: number;
  bytesRead(): number;
  /** CSV: the header row as written; known once `records()` has yielded or finished. */
  header(): string[] | undefined;
  /** Columns (CSV) or keys (JSON) that name no field: listed once in the summary. */
  unknownColumns(): string[];
  records(): AsyncGenerator<InputRecord>;
}

const FORMAT_BY_EXTENSION: Record<string, InputFormat> = {
  '.csv': 'csv',
  '.txt': 'csv',
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.xlsx': 'xlsx',
};
/** csv-parse keeps a record in memory while reading it: a bound, so a runaway quote cannot eat the heap. */
const MAX_RECORD_BYTES = MAX_LINE_BYTES;
/**
 * The cells a row may have: as many columns as a spreadsheet has (Excel and LibreOffice: 16,384).
 * A row with more is refused whole, its cells not kept; a header with more refuses the file.
 * (csv-line-guard.ts bounds the bytes of a line, and its cells for memory's sake; this bound is
 * the row's, counted on the cells csv-parse read.)
 */
export const MAX_ROW_CELLS = 16_384;
const MAX_UNKNOWN_LISTED = 100;

export function parseFormatFlag(value: string): InputFormat {
  const format = value.trim().toLowerCase();
  if ((INPUT_FORMATS as readonly string[]).includes(format)) return format as InputFormat;
  throw new UsageError(`--format ${JSON.stringify(value)} is not one of csv, json, jsonl, xlsx.`);
}

export function parseDelimiterFlag(value: string): string | undefined {
  const named: Record<string, string> = { auto: '', ',': ',', comma: ',', ';': ';', semicolon: ';', tab: '\t', '\\t': '\t', '\t': '\t' };
  const delimiter = named[value.trim().toLowerCase()] ?? named[value];
  if (delimiter === undefined) throw new UsageError(`--delimiter ${JSON.stringify(value)} is not one of auto, ',', ';', tab.`);
  return delimiter || undefined;
}

export function formatOf(file: string): InputFormat {
  const ext = extname(file).toLowerCase();
  const format = FORMAT_BY_EXTENSION[ext];
  if (!format && (ext === '.xls' || ext === '.xlsb' || ext === '.ods'))
    throw new UsageError(`${file} is a ${ext} workbook, which is not read: save it from Excel as .xlsx (Excel Workbook) or as CSV.`);
  if (!format) throw new UsageError(`Cannot tell the format of ${file} from its extension: give --format csv, json, jsonl or xlsx.`);
  return format;
}

const number = (n: number): string => n.toLocaleString('en-US');

/** Why a line the guard dropped, or a row (a header) of too many cells, is not read: its length, its cells, or both. */
function oversizedProblem(line: OversizedLine, what = 'a row'): string {
  const long = line.bytes > MAX_LINE_BYTES;
  const wide = line.cells > MAX_ROW_CELLS;
  const size = [long && `is ${number(line.bytes)} bytes long`, wide && `has ${number(line.cells)} cells`].filter(Boolean).join(' and ');
  const bound = [long && `${MAX_LINE_BYTES / 1024 / 1024} MiB`, wide && `${number(MAX_ROW_CELLS)} cells`].filter(Boolean).join(' and ');
  return `${size}, more than the ${bound} ${what} may have${what === 'a row' ? ': none of its cells is read' : ''}`;
}

/** Where a CSV header puts each field: the first column that names it (a later one is ignored). */
interface FieldLayout {
  names: string[];
  cells: number[];
  /** Every field of the header, in header order, as `''`: each row's fields start as a copy of it. */
  empty: Record<string, string>;
}

function fieldLayout(columns: ReadonlyArray<string | undefined>): FieldLayout {
  const names: string[] = [];
  const cells: number[] = [];
  const seen = new Set<string>();
  columns.forEach((name, i) => {
    if (name === undefined || seen.has(name)) return;
    seen.add(name);
    names.push(name);
    cells.push(i);
  });
  // Made in one go: an object given sixty fields one by one by name turns into a dictionary
  // (V8's slow mode), and every row copies this object.
  return { names, cells, empty: Object.fromEntries(names.map((name) => [name, ''])) };
}

/**
 * A row's fields. Copying one object of the header's fields keeps every row's the same shape
 * and only overwrites its values; adding 60 fields one by one to `{}` took twice the time
 * (about a tenth of reading and validating a row, cpu-prof).
 */
function fieldsOf(layout: FieldLayout, cells: readonly string[]): Record<string, string> {
  const fields = { ...layout.empty };
  for (let k = 0; k < layout.names.length; k++) fields[layout.names[k]!] = cells[layout.cells[k]!] ?? '';
  return fields;
}

/** The markers of dropped lines among a record's cells: how many, and the first. */
function markersIn(cells: readonly string[]): { count: number; first?: OversizedLine } {
  let count = 0;
  let first: OversizedLine | undefined;
  for (const cell of cells) {
    for (let from = 0; ;) {
      const found = oversizedOf(cell, from);
      if (!found) break;
      count++;
      first ??= found.line;
      from = found.next;
    }
  }
  return first ? { count, first } : { count };
}

export async function openInput(file: string, options: InputOptions = {}): Promise<InputFile> {
  const size = await stat(file).then(
    (s) => {
      if (!s.isFile()) throw new InputError(`${file} is not a file.`);
      return s.size;
    },
    (err: NodeJS.ErrnoException) => {
      throw new InputError(`${file} cannot be read (${err.code ?? err.message}).`, { cause: err });
    },
  );
  const format = options.format ?? formatOf(file);
  // A workbook is a zip: its text is UTF-8 inside, and nothing of it is sniffed.
  const encoding = format === 'xlsx' ? 'utf8' : (options.encoding ?? (await detectEncoding(file)));
  const sniffed: Sniffed = format === 'csv' ? await sniffCsv(file) : { delimiter: ',', lineEnding: '\n', recordDelimiters: ['\n'] };
  const delimiter = options.delimiter ?? sniffed.delimiter;
  const { mapping } = options;
  const unknown = new Set<string>();
  let header: string[] | undefined;
  let decoder: ReturnType<typeof createDecoder> | undefined;
  const workbook =
    format === 'xlsx'
      ? readXlsx(file, {
          sheet: options.sheet,
          isDateColumn: (names, i) => /Date$/.test(resolveHeader(names[i] ?? '', mapping, options.columns) ?? ''),
        })
      : undefined;

  const noteUnknown = (name: string): void => {
    if (unknown.size < MAX_UNKNOWN_LISTED && name.trim() !== '' && !OWN_COLUMNS.has(headerKey(name))) unknown.add(name.trim());
  };

  /**
   * A CSV's or a sheet's header row as the fields of its columns (`where`: which row was read as
   * the header, for the sentence): the columns the tool adds to its own files are no fields, the
   * others are named by the mapping or the built-in names; a row that names none is no header.
   */
  const headerFields = (cells: string[], where: string): Array<string | undefined> => {
    header = cells;
    const fields = cells.map((h) => {
      const field = OWN_COLUMNS.has(headerKey(h)) ? undefined : resolveHeader(h, mapping, options.columns);
      if (!field) noteUnknown(h);
      return field;
    });
    if (!fields.some((c) => c !== undefined)) {
      throw new InputError(
        `${file} has no header row with known field names (${where} is read as the header; --mapping renames a bank's own headers).`,
      );
    }
    return fields;
  };

  /** The file's text; `bytes`: UTF-8 checked and left as bytes, for csv-parse (decode.ts). */
  function decodedText(bytes = false): NodeJS.ReadableStream {
    decoder = bytes ? createCheckedBytes(encoding, file) : createDecoder(encoding, file);
    const source = createReadStream(file);
    source.once('error', (err) => decoder!.destroy(err));
    return source.pipe(decoder);
  }

  async function* csvRecords(): AsyncGenerator<InputRecord> {
    // relax_quotes: 1C writes `ГУ МВД России "Главное"` unquoted; the cell keeps its quotes
    // and the rejects writer quotes it properly.
    const parser = parse({
      delimiter,
      record_delimiter: sniffed.recordDelimiters,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      max_record_size: MAX_RECORD_BYTES,
    });
    const text = decodedText(true);
    const guard = new CsvLineGuard(delimiter);
    text.once('error', (err: Error) => guard.destroy(err));
    guard.once('error', (err: Error) => parser.destroy(err));
    text.pipe(guard).pipe(parser);
    let columns: Array<string | undefined> | undefined;
    let layout: FieldLayout | undefined;
    let row = 0;
    /** Lines the guard dropped whose marker has been read. */
    let marked = 0;
    try {
      for await (const cells of parser as AsyncIterable<string[]>) {
        // A line the guard dropped is one cell, its marker (or, after an open quote, a cell that holds it).
        let over: OversizedLine | undefined;
        if (guard.dropped() > marked) {
          const markers = markersIn(cells);
          marked += markers.count;
          over = markers.first;
        }
        if (!over && cells.length > MAX_ROW_CELLS) over = { bytes: 0, cells: cells.length };
        if (!columns) {
          if (over) throw new InputError(`${file} cannot be read as CSV: its header line ${oversizedProblem(over, 'a header')}.`);
          for (let i = 0; i < cells.length; i++) cells[i] = readCell(cells[i]!);
          columns = headerFields(cells, 'the first line');
          continue;
        }
        if (over) {
          row++;
          const problem = { field: '(row)', message: oversizedProblem(over) };
          yield {
            row,
            fields: unreadableFields(),
            raw: { kind: 'cells', cells: new Array<string>(columns.length).fill('') },
            problems: [problem],
          };
          continue;
        }
        for (let i = 0; i < cells.length; i++) cells[i] = readCell(cells[i]!);
        // A line of bare delimiters (Excel pads blank rows so) is blank, not a record.
        if (cells.every((c) => c.trim() === '')) continue;
        row++;
        // A row of another width is shifted (an unquoted `56,2`, a lost cell), or the whole line sits in its
        // first cell (a line with another delimiter): no cell of it can be taken for a field, the dealId least.
        if (cells.length !== columns.length) {
          const problem = {
            field: '(row)',
            message: `has ${cells.length} ${cells.length === 1 ? 'cell' : 'cells'} where the header has ${columns.length}`,
          };
          yield { row, fields: unreadableFields(), raw: { kind: 'cells', cells }, problems: [problem] };
          continue;
        }
        const fields = fieldsOf((layout ??= fieldLayout(columns)), cells);
        applyDefaults(fields, mapping);
        yield { row, fields, raw: { kind: 'cells', cells }, problems: [] };
      }
    } catch (err) {
      if (err instanceof CsvError) {
        throw new InputError(
          `${file} cannot be read as CSV near line ${typeof err.lines === 'number' ? err.lines : '?'}: ${err.code === 'CSV_MAX_RECORD_SIZE' ? `a record is longer than ${MAX_RECORD_BYTES / 1024 / 1024} MiB (an unclosed quote?)` : err.message}.`,
          { cause: err },
        );
      }
      throw err;
    } finally {
      parser.destroy();
      guard.destroy();
    }
    if (!columns) throw new InputError(`${file} is empty: a header row and at least one record are expected.`);
  }

  /** A sheet's rows as a CSV's: the first row the header, a row wider than it refused, a shorter one padded. */
  async function* xlsxRecords(): AsyncGenerator<InputRecord> {
    let columns: Array<string | undefined> | undefined;
    let layout: FieldLayout | undefined;
    let row = 0;
    for await (const cells of workbook!.rows()) {
      if (!columns) {
        if (cells.length > MAX_ROW_CELLS)
          throw new InputError(`${file} cannot be read: its header row has more than ${number(MAX_ROW_CELLS)} cells.`);
        columns = headerFields(cells, "the sheet's first row that is not blank");
        continue;
      }
      row++;
      // Cells past the header's width that are blank are no cells (Excel keeps formatted blanks).
      let width = cells.length;
      while (width > columns.length && cells[width - 1]!.trim() === '') width--;
      cells.length = width;
      if (width > columns.length) {
        const problem = { field: '(row)', message: `has ${width} cells where the header has ${columns.length}` };
        yield { row, fields: unreadableFields(), raw: { kind: 'cells', cells }, problems: [problem] };
        continue;
      }
      while (cells.length < columns.length) cells.push('');
      const fields = fieldsOf((layout ??= fieldLayout(columns)), cells);
      applyDefaults(fields, mapping);
      yield { row, fields, raw: { kind: 'cells', cells }, problems: [] };
    }
    if (!columns) throw new InputError(`${file} is empty: a header row and at least one record are expected.`);
  }

  async function* jsonRecords(): AsyncGenerator<InputRecord> {
    const items = format === 'json' ? readJsonRecords(decodedText(), file) : readJsonLines(decodedText(), file);
    for await (const item of items) {
      const problems: FieldProblem[] = [];
      let fields: Record<string, string> = {};
      if (item.problem || !item.value) {
        fields = unreadableFields();
        problems.push({ field: '(row)', message: item.problem ?? 'is not an object' });
      } else {
        const flat = flattenRecord(item.value);
        for (const [key, value] of Object.entries(flat.fields)) {
          const field = OWN_COLUMNS.has(headerKey(key)) ? undefined : resolveHeader(key, mapping, options.columns);
          if (field) fields[field] = value;
          else noteUnknown(key);
        }
        for (const p of flat.problems)
          problems.push({ field: resolveHeader(p.field, mapping, options.columns) ?? p.field, message: p.message });
        applyDefaults(fields, mapping);
      }
      const raw: RawRecord = item.value ? { kind: 'json', text: item.raw, value: item.value } : { kind: 'json', text: item.raw };
      yield { row: item.row, fields, raw, problems };
    }
  }

  return {
    file,
    format,
    encoding,
    delimiter,
    lineEnding: sniffed.lineEnding,
    ...(format === 'xlsx' && options.sheet !== undefined && { sheet: options.sheet }),
    size,
    bytesRead: () => workbook?.bytesRead() ?? decoder?.bytesRead ?? 0,
    header: () => header,
    unknownColumns: () => [...unknown],
    records: () => (format === 'csv' ? csvRecords() : format === 'xlsx' ? xlsxRecords() : jsonRecords()),
  };
}

/**
 * An Excel workbook (`.xlsx`) read as rows of text cells, streaming (exceljs's WorkbookReader,
 * its zip's entries read by ./xlsx-entries.ts: the sheet's rows are parsed as the zip is read;
 * only the shared strings, which Excel keeps apart from the sheets, are held). The first sheet,
 * or the one named by `--sheet`.
 *
 * Cells become the text the loader reads from a CSV: a number as its digits (no `.0`, no
 * exponent: an INN, SNILS or dealId typed as a number stays its digits), a date cell, or a
 * serial number in a date column, as `YYYY-MM-DD`, a formula as its cached result, rich text
 * as its text.
 */
import { createReadStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import type ExcelJS from 'exceljs';
import { loadExcel } from '../files/xlsx-file.js';
import { InputError } from '../errors.js';
import { workbookReader } from './xlsx-entries.js';

export interface XlsxReadOptions {
  /** The sheet by name (trimmed, any case); undefined: the workbook's first sheet. */
  sheet?: string | undefined;
  /**
   * Whether the column at `index` (0-based) holds dates, asked once the header row is read:
   * a plain number there is an Excel serial date.
   */
  isDateColumn?: (header: readonly string[], index: number) => boolean;
}

export interface XlsxRows {
  /** Compressed bytes of the file read so far: progress. */
  bytesRead(): number;
  /** The header row first, then every row that is not blank, as text cells. */
  rows(): AsyncGenerator<string[]>;
}

/** Excel's day 0 of the 1900 date system is 1899-12-30 (it counts 1900-02-29, which never was). */
const EXCEL_EPOCH_MS = Date.UTC(1899, 11, 30);
const DAY_MS = 24 * 60 * 60 * 1000;
/** Serial numbers of the days Excel can show as dates: 1900-01-01 to 9999-12-31. */
const MAX_SERIAL = 2_958_465;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** A moment as the loader's date form: `YYYY-MM-DD`, with ` HH:MM:SS` when it has a time of day. */
export function dateText(date: Date): string {
  const day = `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
  const ms = date.getTime() - Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  if (ms === 0) return day;
  return `${day} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
}

/** An Excel serial date (days since 1899-12-30, a fraction the time of day) as a moment. */
export function serialDate(serial: number): Date {
  return new Date(EXCEL_EPOCH_MS + Math.round(serial * DAY_MS));
}

/**
 * A number as the digits a person typed: integers without `.0` or exponent (a 20-digit id
 * Excel stored as a number keeps its 15 significant digits and the zeros after them), other
 * numbers to Excel's 15 significant digits (56.199999999999996 is 56.2).
 */
export function numberText(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const [mantissa, exponent] = n.toPrecision(15).split('e');
  if (exponent === undefined) {
    const text = String(Number(mantissa));
    return text.includes('e') ? plainDecimal(n) : text;
  }
  return plainDecimal(Number(`${mantissa}e${exponent}`));
}

/** A number written out without an exponent, its digits those of its 15-digit form. */
function plainDecimal(n: number): string {
  const [mantissa = '0', exponent = '0'] = n.toPrecision(15).split('e');
  const negative = mantissa.startsWith('-');
  const [whole = '0', fraction = ''] = mantissa.replace('-', '').split('.');
  const digits = `${whole}${fraction}`.replace(/0+$/, '') || '0';
  const point = whole.length + Number(exponent);
  let text: string;
  if (point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) text = `${digits}${'0'.repeat(point - digits.length)}`;
  else text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${text}` : text;
}

/** A cell's value (as exceljs gives it) as text; `date`: the column holds dates. */
export function cellText(value: unknown, date = false): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') {
    return date && value >= 1 && value <= MAX_SERIAL + 1 ? dateText(serialDate(value)) : numberText(value);
  }
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : dateText(value);
  if (typeof value === 'object') {
    const v = value as { richText?: Array<{ text?: string }>; result?: unknown; text?: unknown; error?: string; formula?: string };
    if (Array.isArray(v.richText)) return v.richText.map((part) => part.text ?? '').join('');
    if ('result' in v || 'formula' in v || 'sharedFormula' in v) return cellText(v.result, date);
    if (v.text !== undefined) return cellText(v.text, date);
    if (typeof v.error === 'string') return v.error;
  }
  // Nothing else comes from a sheet's cells (exceljs's value types); a stranger is no text.
  return '';
}

interface SheetReader extends AsyncIterable<ExcelJS.Row> {
  name: string;
}

/** The workbook's sheets in their order, as its workbook.xml lists them (read before the sheets). */
function sheetNames(reader: ExcelJS.stream.xlsx.WorkbookReader): string[] {
  const model = (reader as unknown as { model?: { sheets?: Array<{ name?: string }> } }).model;
  return (model?.sheets ?? []).map((s) => s.name ?? '').filter((name) => name !== '');
}

const sameName = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

export function readXlsx(file: string, options: XlsxReadOptions = {}): XlsxRows {
  let bytes = 0;
  return {
    bytesRead: () => bytes,
    async *rows() {
      const { default: excel } = await loadExcel();
      const source = createReadStream(file);
      const counted = new PassThrough();
      source.on('data', (chunk: string | Buffer) => {
        bytes += chunk.length;
      });
      source.once('error', (err) => counted.destroy(err));
      source.pipe(counted);
      const reader = workbookReader(excel, counted, {
        worksheets: 'emit',
        sharedStrings: 'cache',
        // Kept for the number formats: a number shown as a date is read as one.
        styles: 'cache',
        hyperlinks: 'ignore',
        entries: 'ignore',
      });
      let found = false;
      let seen: string[] = [];
      try {
        for await (const sheet of reader as AsyncIterable<SheetReader>) {
          const names = sheetNames(reader);
          seen = names.length > 0 ? names : [...seen, sheet.name];
          const wanted = options.sheet ?? names[0] ?? sheet.name;
          if (!sameName(sheet.name, wanted)) {
            // A sheet passed over is still read to its end, as exceljs's own reading needed: its
            // temp file is deleted as soon as the next sheet is asked for (./xlsx-entries.ts).
            for await (const row of sheet) void row;
            continue;
          }
          found = true;
          yield* sheetRows(sheet, options);
          break;
        }
      } catch (err) {
        if (err instanceof InputError) throw err;
        throw new InputError(
          `${file} cannot be read as an Excel workbook (.xlsx: ${(err as Error).message}); save it again from Excel as .xlsx, or as CSV.`,
          { cause: err },
        );
      } finally {
        source.destroy();
        counted.destroy();
      }
      if (!found) {
        if (options.sheet === undefined) throw new InputError(`${file} has no sheet: a header row and at least one record are expected.`);
        throw new InputError(
          `${file} has no sheet named ${JSON.stringify(options.sheet)} (its sheets: ${seen.map((s) => JSON.stringify(s)).join(', ') || 'none'}).`,
        );
      }
    },
  };
}

async function* sheetRows(sheet: SheetReader, options: XlsxReadOptions): AsyncGenerator<string[]> {
  let header: string[] | undefined;
  let dates: boolean[] = [];
  for await (const row of sheet) {
    // row.values is 1-based: [empty, A, B, ...]; cells never written are holes.
    const values = row.values as unknown[];
    const cells: string[] = [];
    for (let i = 1; i < values.length; i++) cells.push(cellText(values[i], dates[i - 1] === true));
    if (cells.every((c) => c.trim() === '')) continue;
    if (!header) {
      header = cells;
      dates = header.map((_, i) => options.isDateColumn?.(header!, i) ?? false);
    }
    yield cells;
  }
}

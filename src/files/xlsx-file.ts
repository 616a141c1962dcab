/**
 * A table written as an Excel workbook (`.xlsx`), streaming (exceljs's WorkbookWriter), whole
 * or not at all (atomic-file.ts). One sheet: the header row frozen and filtered, the columns
 * sized to what their first rows hold. Every cell is text (an id, a UIN, a SNILS, a cadastral
 * number stays exactly its characters, and a text cell is never run as a formula) except in
 * the columns that are declared dates (a real date cell) or numbers (a number Excel can sum).
 * A workbook written so loads back as it was (read-xlsx.ts).
 */
import { PassThrough } from 'node:stream';
import type ExcelJS from 'exceljs';
import { createAtomicFile } from './atomic-file.js';

export type XlsxColumnKind = 'text' | 'date' | 'number';

export interface XlsxColumn {
  header: string;
  kind?: XlsxColumnKind;
}

export interface XlsxFileOptions {
  /** The permissions of a file created where there was none (atomic-file.ts). */
  mode?: number;
  signal?: AbortSignal;
  /** The sheet's name; "Sheet1" when not given. */
  sheet?: string;
}

export interface XlsxFile {
  readonly path: string;
  /** One row of cells, in the columns' order; a missing cell is blank. */
  write(cells: readonly string[]): Promise<void>;
  /** Ends the workbook and puts it in place of the target. */
  commit(): Promise<void>;
  /** Drops what was written; the target stays as it was. */
  abort(): Promise<void>;
}

/** Rows looked at to size the columns before the first is written (a streamed sheet's widths come first). */
const SIZING_ROWS = 200;
const MIN_WIDTH = 8;
const MAX_WIDTH = 60;
const DATE_FORMAT = 'dd.mm.yyyy';
const DATE_TIME_FORMAT = 'dd.mm.yyyy hh:mm:ss';
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const DECIMAL = /^-?(?:0|[1-9]\d{0,14})(?:\.\d{1,6})?$/;

/**
 * `YYYY-MM-DD` (a calendar day, kept as that day) or an ISO moment (its UTC time, as the tool
 * writes them) as the Date exceljs writes as an Excel date; undefined when it is not one.
 */
export function cellDate(value: string): Date | undefined {
  const m = ISO_DATE.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h = '0', mi = '0', s = '0', ms = '0', zone] = m;
  let time = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number(ms.padEnd(3, '0')));
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const [zh, zm] = [zone.slice(1, 3), zone.slice(-2)];
    time -= sign * (Number(zh) * 60 + Number(zm)) * 60_000;
  }
  // 2026-02-31 is no day: left as the text it is.
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (Number.isNaN(time) || day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return undefined;
  return new Date(time);
}

function cellValue(value: string, kind: XlsxColumnKind): string | number | Date {
  if (value === '') return '';
  if (kind === 'date') return cellDate(value) ?? value;
  if (kind === 'number' && DECIMAL.test(value)) return Number(value);
  return value;
}

function widthOf(column: XlsxColumn, rows: ReadonlyArray<readonly string[]>, i: number): number {
  let width = column.header.length;
  for (const row of rows) {
    const cell = row[i] ?? '';
    const longest = cell.includes('\n') ? Math.max(...cell.split('\n').map((line) => line.length)) : cell.length;
    width = Math.max(width, column.kind === 'date' ? 10 : longest);
  }
  return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, width + 2));
}

/**
 * exceljs, imported when a workbook is first read or written: it and what it pulls in (jszip,
 * archiver, unzipper, bluebird: about 500 modules) cost every command's start about 0.14 s of
 * CPU, a fifth of it (0.73 s against 0.59 here), and most commands never touch a workbook.
 */
export function loadExcel(): Promise<{ default: typeof ExcelJS }> {
  return import('exceljs');
}

export async function createXlsxFile(path: string, columns: readonly XlsxColumn[], options: XlsxFileOptions = {}): Promise<XlsxFile> {
  const { default: excel } = await loadExcel();
  const zip = new PassThrough();
  const file = await createAtomicFile(path, {
    through: [zip],
    ...(options.mode !== undefined && { mode: options.mode }),
    ...(options.signal && { signal: options.signal }),
  });
  const workbook = new excel.stream.xlsx.WorkbookWriter({ stream: zip, useStyles: true, useSharedStrings: false });
  const sheet = workbook.addWorksheet(options.sheet ?? 'Sheet1', { views: [{ state: 'frozen', ySplit: 1, xSplit: 0 }] });
  let pending: Array<readonly string[]> | undefined = [];
  let failure: Error | undefined;

  const hasTime = (rows: ReadonlyArray<readonly string[]>, i: number): boolean => rows.some((row) => /\d[T ]\d/.test(row[i] ?? ''));

  function start(): void {
    const rows = pending ?? [];
    pending = undefined;
    sheet.columns = columns.map((column, i) => ({
      header: column.header,
      key: `c${i}`,
      width: widthOf(column, rows, i),
      style:
        column.kind === 'date'
          ? { numFmt: hasTime(rows, i) ? DATE_TIME_FORMAT : DATE_FORMAT }
          : column.kind === 'number'
            ? {}
            : // Text: what a person types into the cell stays text too.
              { numFmt: '@' },
    }));
    sheet.getRow(1).font = { bold: true };
    sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: 1, column: Math.max(1, columns.length) } };
    for (const row of rows) addRow(row);
  }

  function addRow(cells: readonly string[]): void {
    const values = columns.map((column, i) => cellValue(cells[i] ?? '', column.kind ?? 'text'));
    // Cells past the columns (a row wider than its header) are kept, as text.
    for (let i = columns.length; i < cells.length; i++) values.push(cells[i] ?? '');
    sheet.addRow(values).commit();
  }

  return {
    path,
    write(cells) {
      if (failure) return Promise.reject(failure);
      if (pending) {
        pending.push([...cells]);
        if (pending.length >= SIZING_ROWS) start();
      } else addRow(cells);
      return Promise.resolve();
    },
    async commit() {
      try {
        if (pending) start();
        sheet.commit();
        await workbook.commit();
        await file.commit();
      } catch (err) {
        failure = err as Error;
        await file.abort();
        throw err;
      }
    },
    async abort() {
      await file.abort();
    },
  };
}

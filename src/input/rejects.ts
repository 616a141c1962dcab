/**
 * The rejects file: the refused records in the input's own format, encoding and
 * delimiter, unchanged, after two columns of ours: `row` (the record's number in
 * the input) and `errors` (`field: message; ...`). Fixed in Excel and loaded again
 * as it is, it runs: the loader ignores the columns of ours (mapping.ts, OWN_COLUMNS).
 * CSV cells a spreadsheet would run get a leading `'`, which the loader takes
 * off again (csv-cell.ts); a cell with a line break is always quoted.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { stringify, type Stringifier } from 'csv-stringify';
import { OutputError } from '../errors.js';
import { createAtomicFile, PRIVATE_FILE_MODE, type AtomicFile } from '../files/atomic-file.js';
import { createXlsxFile, type XlsxFile } from '../files/xlsx-file.js';
import { excelCell, QUOTE_LINE_BREAKS, safeCell } from './csv-cell.js';
import { isIdColumn } from './id-columns.js';
import type { Lang } from './lang.js';
import type { FieldProblem } from '../domain/deal.js';
import { createEncoder } from './decode.js';
import { headerKey, OWN_COLUMNS } from './mapping.js';
import type { InputFile, InputRecord } from './open-input.js';
import { OWN_COLUMN_HEADERS_RU, type OwnColumn } from './own-columns.js';
import { formatProblemsRu } from './problems-ru.js';

export const ROW_COLUMN = 'row';
export const ERRORS_COLUMN = 'errors';
/** The rejects file's columns of ours, first. */
export const REJECTS_COLUMNS = [ROW_COLUMN, ERRORS_COLUMN] as const;

/**
 * Writes input records back in the input's own format, encoding, delimiter and
 * line ending, unchanged, after columns of ours (`row`, `errors`; the attention
 * file's `row`, `outcome`, `hint`, `errors`). The loader ignores those columns on
 * input; an input that has them (a rejects or attention file loaded again) has
 * them replaced by the new ones, never repeated.
 */
export interface RowsWriter {
  /** `extra`: the value of each column of ours, by name (a number is written as its digits). */
  write(record: InputRecord, extra: Readonly<Record<string, string | number>>): Promise<void>;
  /**
   * Puts the file in place of any previous one; `rows` is 0 (and nothing was
   * written, the previous file stays) when no record was, unless `always`.
   */
  close(): Promise<{ file: string; rows: number }>;
  /** Drops what was written (the producer failed): the previous file stays. */
  abort(): Promise<void>;
}

export interface RejectsWriter {
  write(record: InputRecord, problems: readonly FieldProblem[]): Promise<void>;
  close(): Promise<{ file: string; rows: number }>;
  abort(): Promise<void>;
}

/** Where a file of rows goes, written or opened: a CSV or JSON file, or a workbook. */
type RowsTarget = Pick<AtomicFile, 'write' | 'commit' | 'abort'>;

/** A path that names an Excel workbook: the rows are written as one. */
export const isXlsxPath = (path: string): boolean => extname(path).toLowerCase() === '.xlsx';

/** `<dir>/<stem>.rejects<ext>` beside the input. */
export function defaultRejectsPath(input: string): string {
  const ext = extname(input);
  return join(dirname(input), `${basename(input, ext)}.rejects${ext || '.csv'}`);
}

export function formatProblems(problems: readonly FieldProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}

/** The headers of columns of ours in `lang`: their Russian names for `ru` (own-columns.ts), their names for English. */
export function ownHeaders(columns: readonly OwnColumn[], lang: Lang | undefined): readonly string[] {
  return lang === 'ru' ? columns.map((c) => OWN_COLUMN_HEADERS_RU[c]) : columns;
}

/**
 * The rejects file: `row`, `errors`, then the refused records. `lang: 'ru'` words the problems
 * in Russian and, in a table (CSV or workbook), names the two columns so; JSON keeps its keys.
 */
export function createRejectsWriter(file: string, input: InputFile, options: { lang?: Lang | undefined } = {}): RejectsWriter {
  const russian = options.lang === 'ru';
  const writer = createRowsWriter(file, input, REJECTS_COLUMNS, { headers: ownHeaders(REJECTS_COLUMNS, options.lang) });
  const format = russian ? formatProblemsRu : formatProblems;
  return {
    write: (record, problems) => writer.write(record, { [ROW_COLUMN]: record.row, [ERRORS_COLUMN]: format(problems) }),
    close: () => writer.close(),
    abort: () => writer.abort(),
  };
}

/**
 * Opened on the first record, so a clean load leaves no empty file behind (unless
 * `always`). Written to a temporary file beside `file` and put in its place by
 * `close`: until then, and after `abort` or a failure, the previous file stays.
 * `columns` (ours) come first; then the input's own columns, less any of ours it had.
 */
export interface RowsWriterOptions {
  /** Written (empty but for the header) even when no record is. */
  always?: boolean;
  /**
   * A CSV input's records in the form Russian Excel opens by a double click (`;`, CRLF,
   * UTF-8 with a BOM; a Windows-1251 input stays Windows-1251, which it reads as its own
   * code page) instead of the input's own delimiter, encoding and line ending. The loader
   * reads it back unchanged: it detects the BOM and the `;`. JSON inputs stay JSON.
   */
  excel?: boolean;
  /**
   * What the header row of a CSV or workbook says of each of `columns` (`--lang ru`'s names,
   * which the loader knows too); the names themselves when not given. JSON keeps the names.
   */
  headers?: readonly string[];
}

export function createRowsWriter(file: string, input: InputFile, columns: readonly string[], options: RowsWriterOptions = {}): RowsWriter {
  let rows = 0;
  let target: AtomicFile | undefined;
  let workbook: XlsxFile | undefined;
  let csv: Stringifier | undefined;
  /** CSV: the input's header cells that are columns of ours (a file of ours loaded again): left out. */
  let dropped = new Set<number>();
  let width = 0;
  let opened: Promise<RowsTarget> | undefined;
  let stopped = false;
  const xlsxOut = isXlsxPath(file);
  const oursAsShown = columns.map((name, i) => options.headers?.[i] ?? name);
  // A workbook's rows are cells too: written back as a workbook, or as a CSV Russian Excel opens.
  const cellsIn = input.format === 'csv' || input.format === 'xlsx';

  /** The input's header less the columns of ours it had, noted in `dropped` and `width`. */
  function ownHeader(): string[] {
    const header = input.header() ?? [];
    width = header.length;
    dropped = new Set(header.flatMap((h, i) => (OWN_COLUMNS.has(headerKey(h)) ? [i] : [])));
    return header.filter((_, i) => !dropped.has(i));
  }

  async function openFile(): Promise<RowsTarget> {
    if (xlsxOut) {
      if (!cellsIn)
        throw new OutputError(
          `${file} cannot be written as a workbook: the input ${input.file} is ${input.format.toUpperCase()}, whose records are no table; name a .${input.format} file.`,
        );
      const header = [...oursAsShown, ...ownHeader()];
      // Created 0600: the rows are the input's own, owners' names and passports included.
      workbook = await createXlsxFile(
        file,
        header.map((name, i) => ({ header: name, kind: columns[i] === ROW_COLUMN ? 'number' : 'text' })),
        { mode: PRIVATE_FILE_MODE },
      );
      return workbook;
    }
    const excel = (options.excel === true && input.format === 'csv') || input.format === 'xlsx';
    const encoder = createEncoder(excel && input.encoding !== 'windows-1251' ? 'utf8-bom' : input.encoding);
    let ids: boolean[] = [];
    if (cellsIn) {
      csv = stringify({
        delimiter: excel ? ';' : input.delimiter,
        record_delimiter: excel || input.lineEnding === '\r\n' ? 'windows' : 'unix',
        quoted_match: QUOTE_LINE_BREAKS,
        // For Excel, ids stay text (csv-cell.ts); the header is never one.
        cast: {
          string: excel ? (value, context) => (context.records === 0 ? safeCell(value) : excelCell(value, ids[context.index])) : safeCell,
        },
      });
    }
    // A pipe at its name (a FIFO beside the input) would hold the load until a reader came; a
    // device (`--rejects /dev/null`) is written in place.
    const existing = await stat(file).catch(() => undefined);
    if (existing && !existing.isFile() && !existing.isCharacterDevice())
      throw new OutputError(
        `${file} is not a regular file (a pipe, a socket or a folder), so the refused rows were not written: remove it or name another file.`,
      );
    // Created 0600: the refused rows are the input's own, owners' names and passports included.
    target = await createAtomicFile(file, { through: csv ? [csv, encoder] : [encoder], mode: PRIVATE_FILE_MODE });
    if (csv) {
      const own = ownHeader();
      ids = [...columns, ...own].map((name) => isIdColumn(name));
      await target.write([...oursAsShown, ...own]);
    } else if (input.format === 'json') {
      await target.write('[\n');
    }
    return target;
  }

  return {
    async write(record, extra) {
      if (stopped) throw new OutputError(`${file} was already closed; nothing more can be written to it.`);
      opened ??= openFile();
      const out = await opened;
      if ((csv || workbook) && record.raw.kind === 'cells') {
        // A row wider than the header keeps every cell it has: those past the header stay at its end.
        const own = record.raw.cells.filter((_, i) => i >= width || !dropped.has(i));
        await out.write([...columns.map((name) => String(extra[name] ?? '')), ...own]);
      } else {
        // JSON: ours first, then the record as it was (less any fields of ours); a line that was not JSON is kept as text.
        const ours = Object.fromEntries(columns.map((name) => [name, extra[name] ?? '']));
        const value =
          record.raw.kind === 'json' && record.raw.value
            ? { ...ours, ...Object.fromEntries(Object.entries(record.raw.value).filter(([key]) => !OWN_COLUMNS.has(headerKey(key)))) }
            : { ...ours, invalidRecord: record.raw.kind === 'json' ? record.raw.text : '' };
        const text = JSON.stringify(value);
        await out.write(input.format === 'json' ? `${rows > 0 ? ',\n' : ''}${text}` : `${text}\n`);
      }
      rows++;
    },
    async close() {
      if (stopped) throw new OutputError(`${file} was not written: its writing was stopped before it was closed.`);
      if (!opened && !options.always) return { file, rows: 0 };
      opened ??= openFile();
      try {
        const out = await opened;
        if (input.format === 'json') await out.write('\n]\n');
        await out.commit();
      } catch (err) {
        await (workbook ?? target)?.abort();
        throw err;
      }
      return { file, rows };
    },
    async abort() {
      stopped = true;
      await opened?.catch(() => undefined);
      await (workbook ?? target)?.abort();
    },
  };
}

/**
 * The rejects file: the refused records in the input's own format, encoding and
 * delimiter, unchanged, plus an `errors` column (`field: message; ...`). Fixed
 * in Excel and loaded again as it is, it runs: the loader ignores `errors`.
 * CSV cells a spreadsheet would run get a leading `'`, which the loader takes
 * off again (csv-cell.ts); a cell with a line break is always quoted.
 */
import { basename, dirname, extname, join } from 'node:path';
import { stringify, type Stringifier } from 'csv-stringify';
import { OutputError } from '../errors.js';
import { createAtomicFile, type AtomicFile } from '../files/atomic-file.js';
import { QUOTE_LINE_BREAKS, safeCell } from './csv-cell.js';
import type { FieldProblem } from './deal.js';
import { createEncoder } from './decode.js';
import { headerKey } from './mapping.js';
import type { InputFile, InputRecord } from './open-input.js';

export const ERRORS_COLUMN = 'errors';

/**
 * Writes input records back in the input's own format, encoding, delimiter and
 * line ending, unchanged, with columns of ours appended (`errors`; the attention
 * file adds `outcome` and `hint`). The loader ignores those columns on input.
 */
export interface RowsWriter {
  /** `extra`: the value of each extra column, by name. */
  write(record: InputRecord, extra: Readonly<Record<string, string>>): Promise<void>;
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

/** `<dir>/<stem>.rejects<ext>` beside the input. */
export function defaultRejectsPath(input: string): string {
  const ext = extname(input);
  return join(dirname(input), `${basename(input, ext)}.rejects${ext || '.csv'}`);
}

export function formatProblems(problems: readonly FieldProblem[]): string {
  return problems.map((p) => `${p.field}: ${p.message}`).join('; ');
}

/** The rejects file: refused records plus `errors`. */
export function createRejectsWriter(file: string, input: InputFile): RejectsWriter {
  const writer = createRowsWriter(file, input, [ERRORS_COLUMN]);
  return {
    write: (record, problems) => writer.write(record, { [ERRORS_COLUMN]: formatProblems(problems) }),
    close: () => writer.close(),
    abort: () => writer.abort(),
  };
}

/**
 * Opened on the first record, so a clean load leaves no empty file behind (unless
 * `always`). Written to a temporary file beside `file` and put in its place by
 * `close`: until then, and after `abort` or a failure, the previous file stays.
 */
export function createRowsWriter(
  file: string,
  input: InputFile,
  columns: readonly string[],
  options: { always?: boolean } = {},
): RowsWriter {
  let rows = 0;
  let target: AtomicFile | undefined;
  let csv: Stringifier | undefined;
  /** Where each extra column stands in the CSV header (an input's own `errors` column is reused). */
  let at: number[] = [];
  let width = 0;
  let opened: Promise<AtomicFile> | undefined;
  let dropped = false;

  async function openFile(): Promise<AtomicFile> {
    const encoder = createEncoder(input.encoding);
    if (input.format === 'csv') {
      csv = stringify({
        delimiter: input.delimiter,
        record_delimiter: input.lineEnding === '\r\n' ? 'windows' : 'unix',
        quoted_match: QUOTE_LINE_BREAKS,
        cast: { string: safeCell },
      });
    }
    target = await createAtomicFile(file, { through: csv ? [csv, encoder] : [encoder] });
    if (csv) {
      const header = [...(input.header() ?? [])];
      width = header.length;
      at = columns.map((name) => {
        const existing = header.findIndex((h) => headerKey(h) === name);
        if (existing >= 0) return existing;
        header.push(name);
        return header.length - 1;
      });
      await target.write(header);
    } else if (input.format === 'json') {
      await target.write('[\n');
    }
    return target;
  }

  return {
    async write(record, extra) {
      if (dropped) throw new OutputError(`${file} was already closed; nothing more can be written to it.`);
      opened ??= openFile();
      const out = await opened;
      if (csv && record.raw.kind === 'cells') {
        const cells = [...record.raw.cells];
        // A row wider than the header keeps every cell it has: our columns go after them.
        const shift = Math.max(0, cells.length - width);
        columns.forEach((name, i) => {
          const position = at[i]! >= width ? at[i]! + shift : at[i]!;
          while (cells.length < position) cells.push('');
          cells[position] = extra[name] ?? '';
        });
        await out.write(cells);
      } else {
        // JSON: the record as it was, with our fields set; a line that was not JSON is kept as text.
        const ours = Object.fromEntries(columns.map((name) => [name, extra[name] ?? '']));
        const value =
          record.raw.kind === 'json' && record.raw.value
            ? { ...record.raw.value, ...ours }
            : { ...ours, invalidRecord: record.raw.kind === 'json' ? record.raw.text : '' };
        const text = JSON.stringify(value);
        await out.write(input.format === 'json' ? `${rows > 0 ? ',\n' : ''}${text}` : `${text}\n`);
      }
      rows++;
    },
    async close() {
      if (dropped) throw new OutputError(`${file} was not written: its writing was stopped before it was closed.`);
      if (!opened && !options.always) return { file, rows: 0 };
      opened ??= openFile();
      try {
        const out = await opened;
        if (input.format === 'json') await out.write('\n]\n');
        await out.commit();
      } catch (err) {
        await target?.abort();
        throw err;
      }
      return { file, rows };
    },
    async abort() {
      dropped = true;
      await opened?.catch(() => undefined);
      await target?.abort();
    },
  };
}

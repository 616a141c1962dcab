/**
 * The rejects file: the refused records in the input's own format, encoding and
 * delimiter, unchanged, plus an `errors` column (`field: message; ...`). Fixed
 * in Excel and loaded again as it is, it runs: the loader ignores `errors`.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { stringify, type Stringifier } from 'csv-stringify';
import { InputError } from '../errors.js';
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
  /** Closes the file; `rows` is 0 (and no file exists) when nothing was written. */
  close(): Promise<{ file: string; rows: number }>;
}

export interface RejectsWriter {
  write(record: InputRecord, problems: readonly FieldProblem[]): Promise<void>;
  close(): Promise<{ file: string; rows: number }>;
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
  };
}

/** Opened on the first record, so a clean load leaves no empty file behind (unless `always`). */
export function createRowsWriter(file: string, input: InputFile, columns: readonly string[], options: { always?: boolean } = {}): RowsWriter {
  let rows = 0;
  let head: NodeJS.WritableStream | undefined;
  let csv: Stringifier | undefined;
  /** Where each extra column stands in the CSV header (an input's own `errors` column is reused). */
  let at: number[] = [];
  let width = 0;
  let opened: Promise<void> | undefined;
  let written: Promise<void> | undefined;
  let failure: InputError | undefined;

  const fail = (err: unknown): InputError =>
    (failure ??= new InputError(`The rejects file ${file} cannot be written (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`, { cause: err }));

  /** Writes, waiting for `drain` when the file is behind, or failing as soon as the file does. */
  const push = async (chunk: unknown): Promise<void> => {
    if (failure) throw failure;
    if (head!.write(chunk as string)) return;
    await Promise.race([new Promise<void>((resolve) => head!.once('drain', () => resolve())), written]);
    if (failure) throw failure;
  };

  async function openFile(): Promise<void> {
    await mkdir(dirname(file), { recursive: true }).catch((err: unknown) => {
      throw fail(err);
    });
    const encoder = createEncoder(input.encoding);
    const sink = createWriteStream(file);
    if (input.format === 'csv') {
      csv = stringify({ delimiter: input.delimiter, record_delimiter: input.lineEnding === '\r\n' ? 'windows' : 'unix' });
      head = csv;
      written = pipeline(csv, encoder, sink).catch((err: unknown) => {
        throw fail(err);
      });
    } else {
      head = encoder;
      written = pipeline(encoder, sink).catch((err: unknown) => {
        throw fail(err);
      });
    }
    // Reported through push() and close(); never an unhandled rejection.
    written.catch(() => undefined);
    if (csv) {
      const header = [...(input.header() ?? [])];
      width = header.length;
      at = columns.map((name) => {
        const existing = header.findIndex((h) => headerKey(h) === name);
        if (existing >= 0) return existing;
        header.push(name);
        return header.length - 1;
      });
      await push(header);
    } else if (input.format === 'json') {
      await push('[\n');
    }
  }

  return {
    async write(record, extra) {
      opened ??= openFile();
      await opened;
      if (csv && record.raw.kind === 'cells') {
        const cells = [...record.raw.cells];
        // A row wider than the header keeps every cell it has: our columns go after them.
        const shift = Math.max(0, cells.length - width);
        columns.forEach((name, i) => {
          const position = at[i]! >= width ? at[i]! + shift : at[i]!;
          while (cells.length < position) cells.push('');
          cells[position] = extra[name] ?? '';
        });
        await push(cells);
      } else {
        // JSON: the record as it was, with our fields set; a line that was not JSON is kept as text.
        const ours = Object.fromEntries(columns.map((name) => [name, extra[name] ?? '']));
        const value =
          record.raw.kind === 'json' && record.raw.value
            ? { ...record.raw.value, ...ours }
            : { ...ours, invalidRecord: record.raw.kind === 'json' ? record.raw.text : '' };
        const text = JSON.stringify(value);
        await push(input.format === 'json' ? `${rows > 0 ? ',\n' : ''}${text}` : `${text}\n`);
      }
      rows++;
    },
    async close() {
      if (!opened && !options.always) return { file, rows: 0 };
      opened ??= openFile();
      await opened;
      if (input.format === 'json') await push('\n]\n');
      head!.end();
      await written;
      return { file, rows };
    },
  };
}

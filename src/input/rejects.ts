/**
 * The rejects file: the refused records in the input's own format, encoding and
 * delimiter, unchanged, plus an `errors` column (`field: message; ...`). Fixed
 * in Excel and loaded again as it is, it runs: the loader ignores `errors`.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import { stringify, type Stringifier } from 'csv-stringify';
import type { FieldProblem } from './deal.js';
import { createEncoder } from './decode.js';
import { headerKey } from './mapping.js';
import type { InputFile, InputRecord } from './open-input.js';

export const ERRORS_COLUMN = 'errors';

export interface RejectsWriter {
  write(record: InputRecord, problems: readonly FieldProblem[]): Promise<void>;
  /** Closes the file; `rows` is 0 (and no file exists) when nothing was refused. */
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

/** Opened on the first refused record, so a clean load leaves no empty file behind. */
export function createRejectsWriter(file: string, input: InputFile): RejectsWriter {
  let rows = 0;
  let encoder: ReturnType<typeof createEncoder> | undefined;
  let sink: NodeJS.WritableStream | undefined;
  let csv: Stringifier | undefined;
  let errorsAt = -1;
  let opened: Promise<void> | undefined;

  const push = async (stream: NodeJS.WritableStream, chunk: unknown): Promise<void> => {
    if (!stream.write(chunk as string)) await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
  };

  async function openFile(): Promise<void> {
    await mkdir(dirname(file), { recursive: true });
    encoder = createEncoder(input.encoding);
    sink = encoder.pipe(createWriteStream(file));
    if (input.format === 'csv') {
      const header = [...(input.header() ?? [])];
      errorsAt = header.findIndex((h) => headerKey(h) === ERRORS_COLUMN);
      if (errorsAt < 0) {
        header.push(ERRORS_COLUMN);
        errorsAt = header.length - 1;
      }
      csv = stringify({ delimiter: input.delimiter, record_delimiter: input.lineEnding === '\r\n' ? 'windows' : 'unix' });
      csv.pipe(encoder);
      await push(csv, header);
    } else if (input.format === 'json') {
      await push(encoder, '[\n');
    }
  }

  return {
    async write(record, problems) {
      opened ??= openFile();
      await opened;
      const errors = formatProblems(problems);
      if (csv && record.raw.kind === 'cells') {
        const cells = [...record.raw.cells];
        while (cells.length < errorsAt) cells.push('');
        cells[errorsAt] = errors;
        await push(csv, cells);
      } else {
        // JSON: the record as it was, with `errors` set; a line that was not JSON is kept as text.
        const value = record.raw.kind === 'json' && record.raw.value ? { ...record.raw.value, [ERRORS_COLUMN]: errors } : { [ERRORS_COLUMN]: errors, invalidRecord: record.raw.kind === 'json' ? record.raw.text : '' };
        const text = JSON.stringify(value);
        await push(encoder!, input.format === 'json' ? `${rows > 0 ? ',\n' : ''}${text}` : `${text}\n`);
      }
      rows++;
    },
    async close() {
      if (!opened) return { file, rows: 0 };
      await opened;
      if (csv) csv.end();
      else {
        if (input.format === 'json') encoder!.write('\n]\n');
        encoder!.end();
      }
      await finished(sink!);
      return { file, rows };
    },
  };
}

/**
 * The tool's own tables (results, payments) as an Excel workbook, when their path ends in
 * `.xlsx`: records by column name in, a sheet out (files/xlsx-file.ts), ids as text cells,
 * times as dates, counts and amounts as numbers.
 */
import { createXlsxFile, type XlsxColumnKind } from '../files/xlsx-file.js';

/** Columns of the tool's tables that hold moments (ISO times): date cells. */
const DATE_COLUMNS = new Set(['finishedAt', 'stateAt', 'since', 'requirementAt']);
/** Columns that hold counts or amounts: number cells. */
const NUMBER_COLUMNS = new Set(['row', 'httpStatus', 'attempts', 'amount', 'paymentAmount', 'bytes']);

const kindOf = (column: string): XlsxColumnKind => (DATE_COLUMNS.has(column) ? 'date' : NUMBER_COLUMNS.has(column) ? 'number' : 'text');

/** What the results and payments writers write to: a CSV or JSON Lines file (atomic-file.ts), or this. */
export interface TableFile {
  write(chunk: unknown): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

export async function createTableFile(
  path: string,
  columns: readonly string[],
  options: { signal?: AbortSignal | undefined; mode?: number; headers?: readonly string[] } = {},
): Promise<TableFile> {
  const file = await createXlsxFile(
    path,
    // The kind goes by the column's name; the header row may say it in another language.
    columns.map((column, i) => ({ header: options.headers?.[i] ?? column, kind: kindOf(column) })),
    { ...(options.signal && { signal: options.signal }), ...(options.mode !== undefined && { mode: options.mode }) },
  );
  return {
    write: (record) => file.write(columns.map((c) => (record as Record<string, string | number | undefined>)[c]?.toString() ?? '')),
    commit: () => file.commit(),
    abort: () => file.abort(),
  };
}

/**
 * The CSV form of the tool's own files (results, payments): UTF-8 with `,` and LF, or with
 * `--excel` what Russian Excel opens by a double click (a BOM, `;`, CRLF); cells a
 * spreadsheet would run are defused, and a line break inside a cell is always quoted.
 * For Excel, ids stay text (csv-cell.ts, `excelCell`): a 20-digit UIN is not shown as
 * 3.21276022376E+19, a dealId `007` keeps its zeros.
 */
import { stringify, type Stringifier } from 'csv-stringify';
// The same rule as the rejects and attention files, kept with the loader that reads them back.
import { excelCell, QUOTE_LINE_BREAKS, safeCell } from '../input/csv-cell.js';
import { isIdColumn } from '../input/id-columns.js';

/** `headers`: what the header row says of each column (`--lang ru`'s names); the columns' own names when not given. */
export function csvSink(columns: readonly string[], excel = false, headers: readonly string[] = columns): Stringifier {
  return stringify({
    header: true,
    columns: columns.map((key, i) => ({ key, header: headers[i] ?? key })),
    bom: excel,
    delimiter: excel ? ';' : ',',
    record_delimiter: excel ? '\r\n' : '\n',
    cast: {
      string: excel
        ? (value, context) => (context.header ? safeCell(value) : excelCell(value, isIdColumn(String(context.column))))
        : safeCell,
    },
    // A bare CR (or LF under --excel's CRLF) in the gateway's text is no end of a row.
    quoted_match: QUOTE_LINE_BREAKS,
  });
}

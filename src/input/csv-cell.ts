/**
 * What every CSV the tool writes does to a cell, and how the loader reads it
 * back. A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, tab or
 * CR: the tool writes it with one `'` in front. A cell that already starts with
 * apostrophes before such a character gets one more, so that reading strips
 * exactly one `'` wherever the tool could have added it, and the round trip
 * (a file, the rejects or attention file, that file loaded as it is) gives
 * back every value unchanged. A bank's own `'=x` (Excel's text marker) is
 * therefore read as `=x`; `'abc` stays `'abc`.
 */

const APOSTROPHE = 0x27;
/** A cell a spreadsheet would run, with any apostrophes before it: written with one more. */
const RUNS = /^'*[=+\-@\t\r]/;

/** The cell as the tool writes it into a CSV a person opens in a spreadsheet. */
export function safeCell(value: string): string {
  return RUNS.test(value) ? `'${value}` : value;
}

/** The cell's value as `safeCell` had it: one leading `'` dropped where `safeCell` would have added it. */
export function readCell(cell: string): string {
  // The common cell does not start with an apostrophe: one comparison, no regular expression.
  if (cell.charCodeAt(0) !== APOSTROPHE) return cell;
  return RUNS.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/**
 * csv-stringify quotes a cell that holds its own record delimiter, but not a
 * bare CR (nor, in a CRLF file, a bare LF): Excel and other readers take that
 * for the end of a row. Every cell with either is quoted.
 */
export const QUOTE_LINE_BREAKS = /[\r\n]/;

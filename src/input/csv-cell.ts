/**
 * What every CSV the tool writes does to a cell, and how the loader reads it
 * back. A spreadsheet runs a cell that starts with `=`, `+`, `-`, `@`, tab or
 * CR: the tool writes it with one `'` in front. A cell that already starts with
 * apostrophes before such a character gets one more, so that reading strips
 * exactly one `'` wherever the tool could have added it, and the round trip
 * (a file, the rejects or attention file, that file loaded as it is) gives
 * back every value unchanged. A bank's own `'=x` (Excel's text marker) is
 * therefore read as `=x`; `'abc` stays `'abc`.
 *
 * A CSV written for Excel (`--excel`, the attention file) keeps ids as text: a cell of
 * digits that Excel would turn into a number it shows otherwise (a leading zero dropped,
 * 20 digits shown as 3.21276022376E+19, more than 15 digits rounded), or any number-like
 * cell of an id column, is written as the formula `="…"`, whose value Excel and
 * LibreOffice (with formulas evaluated, its default when it opens a file) show as the
 * exact text. Only digits (and a cadastral number's `:`) go inside the quotes, so the
 * formula can compute nothing else; `readCell` reads it back as the bare text.
 */

const APOSTROPHE = 0x27;
/** A cell a spreadsheet would run, with any apostrophes before it: written with one more. */
const RUNS = /^'*[=+\-@\t\r]/;

/** The cell as the tool writes it into a CSV a person opens in a spreadsheet. */
export function safeCell(value: string): string {
  return RUNS.test(value) ? `'${value}` : value;
}

/** A cell of digits, or a cadastral number's digits and colons, that Excel may take for a number or a time. */
const ID_TEXT = /^\d+(?::\d+)*$/;
/** Digits Excel would change on opening: a leading zero, or more than 11 digits (shown with an exponent, or rounded past 15). */
const DIGITS_EXCEL_CHANGES = /^(?:0\d+|\d{12,})$/;
/** `="…"` of digits (and `:`): the form `excelCell` writes, read back as its text. */
const TEXT_FORMULA = /^="(\d+(?::\d+)*)"$/;
const EQUALS = 0x3d;

/**
 * The cell as the tool writes it into a CSV for Excel: an id (`idColumn`) that looks like a
 * number, or digits Excel would change, as the text formula `="…"`; anything else as `safeCell`.
 */
export function excelCell(value: string, idColumn = false): string {
  if (idColumn ? ID_TEXT.test(value) : DIGITS_EXCEL_CHANGES.test(value)) return `="${value}"`;
  return safeCell(value);
}

/**
 * The cell's value as `safeCell` or `excelCell` had it: one leading `'` dropped where `safeCell`
 * would have added it, and `="…"` of digits read as the digits.
 */
export function readCell(cell: string): string {
  // The common cell starts with neither an apostrophe nor `=`: one or two comparisons, no regular expression.
  const first = cell.charCodeAt(0);
  if (first === EQUALS) return TEXT_FORMULA.exec(cell)?.[1] ?? cell;
  if (first !== APOSTROPHE) return cell;
  return RUNS.test(cell.slice(1)) ? cell.slice(1) : cell;
}

/**
 * csv-stringify quotes a cell that holds its own record delimiter, but not a
 * bare CR (nor, in a CRLF file, a bare LF): Excel and other readers take that
 * for the end of a row. Every cell with either is quoted.
 */
export const QUOTE_LINE_BREAKS = /[\r\n]/;

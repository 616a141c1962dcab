/**
 * A CSV's delimiter and line ends, sniffed from its first 64 KiB before csv-parse reads it
 * (open-input.ts): the header line's most frequent delimiter outside quotes, its line end, and
 * the line ends that end the records after it.
 */
import { open } from 'node:fs/promises';

const DELIMITERS = [',', ';', '\t'] as const;

export type LineEnd = '\r\n' | '\n' | '\r';

/** The line end at `i` of `text` (`\r\n`, `\n` or `\r`), if one is there. */
function lineEndAt(text: string, i: number): LineEnd | undefined {
  const ch = text[i];
  if (ch === '\n') return '\n';
  if (ch !== '\r') return undefined;
  return text[i + 1] === '\n' ? '\r\n' : '\r';
}

export interface Sniffed {
  delimiter: string;
  /** The header line's ending, as the rejects file keeps it (a bare CR is written as LF). */
  lineEnding: '\n' | '\r\n';
  /**
   * The line ends that end a record (`recordDelimiters`): a header Excel ended with CRLF and rows
   * appended with LF are rows (csv-parse takes the first line's ending for the whole file, and
   * read five such rows as one).
   */
  recordDelimiters: LineEnd[];
}

/**
 * The first line's delimiter (most frequent of `,` `;` tab outside quotes) and line end, and
 * the line ends of the rows after it in the first 64 KiB (outside quotes).
 */
export async function sniffCsv(file: string): Promise<Sniffed> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    // The characters counted are ASCII, the same bytes in every accepted encoding.
    const text = buffer.subarray(0, bytesRead).toString('latin1');
    let inQuotes = false;
    let header: LineEnd | undefined;
    const rows = { '\r\n': 0, '\n': 0, '\r': 0 };
    const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      const end = inQuotes ? undefined : lineEndAt(text, i);
      if (ch === '"') inQuotes = !inQuotes;
      else if (end) {
        if (header) rows[end]++;
        else header = end;
        i += end.length - 1;
      } else if (!header && !inQuotes && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
    }
    const [best] = [...counts.entries()].sort((a, b) => b[1] - a[1]);
    return {
      delimiter: best && best[1] > 0 ? best[0] : ',',
      lineEnding: header === '\r\n' ? '\r\n' : '\n',
      recordDelimiters: recordDelimiters(header, rows),
    };
  } finally {
    await handle.close();
  }
}

/**
 * A header ended by CRLF over rows that all end by LF (or the other way round): both end records.
 * Otherwise the header's own: the rows of a CRLF file that also holds a bare LF end by CRLF, and
 * that LF sits in a cell, unquoted, as csv-stringify writes it (and a bare CR likewise).
 */
function recordDelimiters(header: LineEnd | undefined, rows: Record<LineEnd, number>): LineEnd[] {
  if (header === undefined) return ['\r\n', '\n', '\r'];
  const other = header === '\r\n' ? '\n' : header === '\n' ? '\r\n' : undefined;
  return other && rows[other] > 0 && rows[header] === 0 ? ['\r\n', '\n'] : [header];
}

/**
 * exceljs's streaming WorkbookReader, with the zip's entries read to the last one.
 *
 * exceljs (4.4.0) reads the zip through unzipper's `Parse` and its own `iterateStream`, which
 * stops at the stream's `end` event. unzipper (0.10.14, and 0.12.5, the newest) emits `end`
 * itself as soon as its writable side has taken the file's last byte, while entries it has
 * already parsed may still wait in its readable buffer: `iterateStream` paused the stream while
 * exceljs handled an earlier entry (copied a sheet to a temp file, say), and the small entries
 * after it are parsed ahead into the buffer. Those entries were lost. A workbook exceljs itself
 * writes keeps `xl/workbook.xml` last, so the same valid file was refused now and then
 * ("Cannot read properties of undefined (reading 'sheets')"): 1 to 5 reads of 300 here, more on
 * a busy host. Excel and LibreOffice write the shared strings and the workbook's relationships
 * after the sheets: a file of theirs could lose those, or a sheet, the same way.
 *
 * Here the entries are read as Node reads any object stream (`for await`, which takes every
 * object pushed before it ends), and the rest is exceljs's own `parse` as it is: each part
 * given to the reader's own method, a sheet read as it streams once the shared strings, the
 * workbook's relationships and its sheet list are known, and kept in a temp file of its own
 * until then (mode 0600, deleted when the sheet is read or the reading ends).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type ExcelJS from 'exceljs';
import type { Entry } from 'unzipper';

/** What exceljs's reader yields from `parse`: a sheet, shared strings, hyperlinks. */
interface ReaderEvent {
  eventType: string;
  value: unknown;
}

/** The parts of exceljs's WorkbookReader (4.4.0, lib/stream/xlsx/workbook-reader.js) its `parse` uses. */
interface ReaderInternals {
  sharedStrings?: unknown;
  workbookRels?: unknown;
  model?: unknown;
  _parseRels(entry: Entry): Promise<void>;
  _parseWorkbook(entry: Entry): Promise<void>;
  _parseSharedStrings(entry: Entry): AsyncIterable<ReaderEvent>;
  _parseStyles(entry: Entry): Promise<void>;
  _parseWorksheet(chunks: AsyncIterable<unknown>, sheetNo: string): Iterable<ReaderEvent>;
  _parseHyperlinks(chunks: AsyncIterable<unknown>, sheetNo: string): Iterable<ReaderEvent>;
  parse(): AsyncGenerator<ReaderEvent>;
}

const SHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;
const SHEET_LINKS = /^xl\/worksheets\/_rels\/sheet(\d+)\.xml\.rels$/;

/**
 * A streaming reader of the workbook `source` carries, which reads every entry of its zip. A
 * failure of `source` ends the reading with its error (unzipper's own would wait for more).
 */
export function workbookReader(
  excel: typeof ExcelJS,
  source: Readable,
  options: Partial<ExcelJS.stream.xlsx.WorkbookStreamReaderOptions>,
): ExcelJS.stream.xlsx.WorkbookReader {
  const reader = new excel.stream.xlsx.WorkbookReader(source, options);
  const internals = reader as unknown as ReaderInternals;
  internals.parse = () => readEntries(internals, source);
  return reader;
}

async function* readEntries(reader: ReaderInternals, source: Readable): AsyncGenerator<ReaderEvent> {
  // Imported here, as exceljs is (src/files/xlsx-file.ts loadExcel): a command reading a CSV loads
  // neither. Its module object as `default`: the command line's bundle gives a CommonJS package no other.
  const { Parse } = (await import('unzipper')).default;
  const zip = Parse({ forceStream: true });
  source.once('error', (err) => zip.destroy(err));
  source.pipe(zip);
  // Sheets met before what reading them needs: their temp files, read after the last entry.
  const waiting: Array<{ sheetNo: string; path: string }> = [];
  let folder: string | undefined;
  try {
    for await (const entry of zip as AsyncIterable<Entry>) {
      const sheet = SHEET.exec(entry.path)?.[1];
      const links = SHEET_LINKS.exec(entry.path)?.[1];
      if (entry.path === 'xl/_rels/workbook.xml.rels') await reader._parseRels(entry);
      else if (entry.path === 'xl/workbook.xml') await reader._parseWorkbook(entry);
      else if (entry.path === 'xl/sharedStrings.xml') yield* reader._parseSharedStrings(entry);
      else if (entry.path === 'xl/styles.xml') await reader._parseStyles(entry);
      else if (sheet !== undefined && reader.sharedStrings && reader.workbookRels && reader.model) {
        yield* reader._parseWorksheet(entry, sheet);
      } else if (sheet !== undefined) {
        folder ??= await mkdtemp(join(tmpdir(), 'realty-batch-sheets-'));
        const path = join(folder, `sheet${sheet}.xml`);
        await pipeline(entry, createWriteStream(path, { mode: 0o600 }));
        waiting.push({ sheetNo: sheet, path });
      } else if (links !== undefined) yield* reader._parseHyperlinks(entry, links);
      entry.autodrain();
    }
    for (const { sheetNo, path } of waiting) {
      const stream = createReadStream(path);
      try {
        yield* reader._parseWorksheet(stream, sheetNo);
      } finally {
        stream.destroy();
        await rm(path, { force: true });
      }
    }
  } finally {
    if (folder) await rm(folder, { recursive: true, force: true });
  }
}

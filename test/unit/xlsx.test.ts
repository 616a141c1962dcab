import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../src/errors.js';
import { createXlsxFile } from '../../src/files/xlsx-file.js';
import { formatOf, openInput, type InputRecord } from '../../src/input/open-input.js';
import { cellText, numberText } from '../../src/input/read-xlsx.js';
import { createRejectsWriter, createRowsWriter } from '../../src/input/rejects.js';
import { workbookReader } from '../../src/input/xlsx-entries.js';
import { ROOT } from '../helpers/cli.js';
import { bankWorkbook, records } from '../helpers/workbooks.js';

/** `bankWorkbook`'s two sheets, zipped after its sheet list and shared strings (test/fixtures/xlsx/README.md). */
const SHEETS_AFTER_STRINGS = join(ROOT, 'test/fixtures/xlsx/sheets-after-strings.xlsx');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'realty-batch-xlsx-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('reading an Excel workbook', () => {
  it('takes .xlsx by its extension, and refuses an old .xls by name', () => {
    expect(formatOf('deals.XLSX')).toBe('xlsx');
    expect(() => formatOf('deals.xls')).toThrow(UsageError);
    expect(() => formatOf('deals.xls')).toThrow(/save it from Excel as \.xlsx/);
  });

  it('reads the first sheet with ids as their digits, date cells and serial dates as YYYY-MM-DD, rich text and formulas as text', async () => {
    const file = join(dir, 'bank.xlsx');
    await bankWorkbook(file);
    const input = await openInput(file);
    expect(input.format).toBe('xlsx');
    const rows = [];
    for await (const record of input.records()) rows.push(record);
    expect(input.header()).toEqual([
      'dealId',
      'cadastralNumber',
      'ownerSnils',
      'ownerBirthDate',
      'ownerDocIssueDate',
      'areaValue',
      'ownerSurname',
    ]);
    expect(rows.map((r) => r.row)).toEqual([1, 2]);
    expect(rows[0]!.fields).toMatchObject({
      dealId: '123456789012345',
      cadastralNumber: '77:01:0001001:1234',
      ownerSnils: '11223344595',
      ownerBirthDate: '1980-05-17',
      ownerDocIssueDate: '2023-12-31',
      areaValue: '56.2',
      ownerSurname: 'Иванов',
    });
    expect(rows[1]!.fields).toMatchObject({ dealId: '2', cadastralNumber: '50:21:0120316:12', areaValue: '0.3', ownerSurname: 'Петров' });
    expect(rows[1]!.problems).toEqual([]);
    expect(input.bytesRead()).toBeGreaterThan(0);
  });

  it('reads the sheet --sheet names, and says which sheets there are when none has that name', async () => {
    const file = join(dir, 'sheets.xlsx');
    await bankWorkbook(file);
    expect((await records(file, 'прочее')).map((r) => r.fields)).toEqual([
      expect.objectContaining({ dealId: 'D-9', ownerSurname: 'Сидоров' }),
    ]);
    const err = await records(file, 'Лист1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toBe(`${file} has no sheet named "Лист1" (its sheets: "Сделки", "Прочее").`);
  });

  it('reads every sheet of a workbook whose sheets stream after its shared strings while the reader takes its time over the first', async () => {
    // unzipper ends its stream at the file's last byte, with the entries it parsed ahead still
    // unread: exceljs's own loop lost «Прочее» here (and the workbook's sheet list, for a file
    // exceljs wrote, now and then). The pause lets the zip's parser reach the end meanwhile.
    const reader = workbookReader(ExcelJS, createReadStream(SHEETS_AFTER_STRINGS), {
      worksheets: 'emit',
      sharedStrings: 'cache',
      styles: 'cache',
    });
    const sheets: string[] = [];
    for await (const sheet of reader as AsyncIterable<ExcelJS.stream.xlsx.WorksheetReader & { name: string }>) {
      await sleep(50);
      let rows = 0;
      for await (const row of sheet) if (row.hasValues) rows++;
      sheets.push(`${sheet.name}: ${rows}`);
    }
    expect(sheets).toEqual(['Сделки: 3', 'Прочее: 2']);
    expect((await records(SHEETS_AFTER_STRINGS, 'Прочее')).map((r) => r.fields)).toEqual([
      expect.objectContaining({ dealId: 'D-9', ownerSurname: 'Сидоров' }),
    ]);
  });

  it('keeps the sheets it reads ahead in files of its own, mode 0600, and deletes them when it has read them or stops', async () => {
    // exceljs's writer puts the sheet list last: the sheets before it wait in temp files.
    const file = join(dir, 'ahead.xlsx');
    await bankWorkbook(file);
    const temp = join(dir, 'tmp');
    await mkdir(temp);
    const before = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    try {
      const modes: number[] = [];
      const input = await openInput(file);
      for await (const record of input.records()) {
        void record;
        for (const folder of await readdir(temp)) {
          for (const sheet of await readdir(join(temp, folder))) {
            modes.push((await stat(join(temp, folder, sheet))).mode & 0o777);
          }
        }
      }
      expect(modes.length).toBeGreaterThan(0);
      expect(new Set(modes)).toEqual(new Set([0o600]));
      // Read to its end, and stopped after the first sheet of two: nothing left either way.
      expect(await readdir(temp)).toEqual([]);
      expect((await records(file, 'Прочее')).length).toBe(1);
      expect(await readdir(temp)).toEqual([]);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  });

  it('refuses a workbook cut short in one sentence, rather than waiting for the rest', async () => {
    const whole = await readFile(SHEETS_AFTER_STRINGS);
    const file = join(dir, 'cut.xlsx');
    await writeFile(file, whole.subarray(0, Math.floor(whole.length * 0.6)));
    const err = await records(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/^\S+cut\.xlsx cannot be read as an Excel workbook \(\.xlsx/);
  });

  it('refuses a file that is no workbook in one sentence', async () => {
    const file = join(dir, 'fake.xlsx');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, 'dealId,ownerSurname\n1,Иванов\n'));
    const err = await records(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toMatch(/^\S+fake\.xlsx cannot be read as an Excel workbook \(\.xlsx/);
  });

  it('writes numbers without ".0" or an exponent', () => {
    expect(numberText(7707083893)).toBe('7707083893');
    expect(numberText(3.21276022376e19)).toBe('32127602237600000000');
    expect(numberText(56.199999999999996)).toBe('56.2');
    expect(numberText(1e-7)).toBe('0.0000001');
    expect(numberText(-12.5)).toBe('-12.5');
    expect(cellText({ formula: 'A1', result: 12345678901 })).toBe('12345678901');
    expect(cellText({ text: 'ссылка', hyperlink: 'https://example.org' })).toBe('ссылка');
    expect(cellText(true)).toBe('TRUE');
  });
});

describe('writing an Excel workbook', () => {
  it('writes ids as text cells, dates as dates, numbers as numbers; the header frozen and filtered, columns sized', async () => {
    const file = join(dir, 'out.xlsx');
    const out = await createXlsxFile(file, [
      { header: 'dealId' },
      { header: 'uin' },
      { header: 'amount', kind: 'number' },
      { header: 'since', kind: 'date' },
    ]);
    await out.write(['007', '32127602237600012345', '2000', '2026-11-20T09:15:00.000Z']);
    await out.write(['=HYPERLINK("x")', '0000000000000000000001', '', 'не дата']);
    await out.commit();

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(file);
    const sheet = workbook.worksheets[0]!;
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(sheet.autoFilter).toBe('A1:D1');
    expect(sheet.getColumn(2).width).toBeGreaterThanOrEqual(22);
    const row = sheet.getRow(2);
    expect(row.getCell(1).value).toBe('007');
    expect(row.getCell(1).type).toBe(ExcelJS.ValueType.String);
    expect(row.getCell(2).value).toBe('32127602237600012345');
    expect(row.getCell(3).value).toBe(2000);
    expect(row.getCell(4).value).toEqual(new Date('2026-11-20T09:15:00.000Z'));
    // A text cell is never a formula, whatever it starts with.
    expect(sheet.getRow(3).getCell(1).type).toBe(ExcelJS.ValueType.String);
    expect(sheet.getRow(3).getCell(1).value).toBe('=HYPERLINK("x")');
    expect(sheet.getRow(3).getCell(4).value).toBe('не дата');
  });

  it('a rejects workbook of a workbook input loads back as it is, its rows and errors columns ignored', async () => {
    const file = join(dir, 'in.xlsx');
    await bankWorkbook(file);
    const input = await openInput(file);
    const rejectsFile = join(dir, 'in.rejects.xlsx');
    const rejects = createRejectsWriter(rejectsFile, input);
    const before: InputRecord[] = [];
    for await (const record of input.records()) {
      before.push(record);
      await rejects.write(record, [{ field: 'ownerSnils', message: 'has a wrong check number' }]);
    }
    expect(await rejects.close()).toEqual({ file: rejectsFile, rows: 2 });
    const again = await records(rejectsFile);
    expect(again.map((r) => r.fields)).toEqual(before.map((r) => r.fields));
  });

  it('an attention workbook of a CSV input loads back as it is', async () => {
    const csv = join(dir, 'deals.csv');
    await import('node:fs/promises').then((fs) =>
      fs.writeFile(csv, 'dealId;ownerSnils;ownerBirthDate;ownerSurname\r\n0012;11223344595;17.05.1980;=cmd\r\n'),
    );
    const input = await openInput(csv);
    const out = join(dir, 'deals.attention.xlsx');
    const writer = createRowsWriter(out, input, ['row', 'outcome', 'hint', 'errors'], { always: true, excel: true });
    const before: InputRecord[] = [];
    for await (const record of input.records()) {
      before.push(record);
      await writer.write(record, { row: record.row, outcome: 'not_found', hint: 'проверьте адрес', errors: '' });
    }
    await writer.close();
    const again = await records(out);
    expect(again.map((r) => r.fields)).toEqual(before.map((r) => r.fields));
    expect(again[0]!.fields).toMatchObject({ dealId: '0012', ownerSurname: '=cmd' });
  });
});

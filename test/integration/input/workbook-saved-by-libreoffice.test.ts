/**
 * A workbook as an office suite saves it, not as exceljs writes it: the bank's export opened
 * and saved again by LibreOffice (the sheet list first, the shared strings and the workbook's
 * relationships after the sheets, as Excel also writes them, so the reader keeps each sheet in a
 * temp file until it has read the entries after it; LibreOffice's own cell types and styles)
 * reads to the same records as the file it came from, its second sheet too.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Open } from 'unzipper';
import { describe, expect } from 'vitest';
import { harness } from '../../helpers/harness.js';
import { savedAsXlsx } from '../../helpers/libreoffice.js';
import { bankWorkbook, records } from '../../helpers/workbooks.js';

const it = harness({ per: 'file', label: 'lo-xlsx', engine: 'none' });

describe('a workbook saved by LibreOffice', { timeout: 180_000 }, () => {
  it('reads to the records of the workbook it was saved from, each sheet, the entries after its sheets included', async ({ dir }) => {
    const original = join(dir, 'bank.xlsx');
    await bankWorkbook(original);
    await mkdir(join(dir, 'saved'));
    const saved = await savedAsXlsx(original, join(dir, 'saved'));

    // The order the reader meets: the sheet list before the sheets, what reading them needs after them.
    const entries = (await Open.file(saved)).files.map((f) => f.path);
    const at = (name: string) => entries.indexOf(name);
    expect(at('xl/workbook.xml')).toBeGreaterThanOrEqual(0);
    expect(at('xl/workbook.xml')).toBeLessThan(at('xl/worksheets/sheet1.xml'));
    expect(at('xl/sharedStrings.xml')).toBeGreaterThan(at('xl/worksheets/sheet2.xml'));
    expect(at('xl/_rels/workbook.xml.rels')).toBeGreaterThan(at('xl/worksheets/sheet2.xml'));

    const fields = async (file: string, sheet?: string) => (await records(file, sheet)).map((r) => [r.row, r.fields]);
    expect(await fields(saved)).toEqual(await fields(original));
    expect(await fields(saved, 'Прочее')).toEqual(await fields(original, 'Прочее'));
    expect((await records(saved)).map((r) => r.fields)).toEqual([
      expect.objectContaining({
        dealId: '123456789012345',
        ownerSnils: '11223344595',
        ownerBirthDate: '1980-05-17',
        ownerSurname: 'Иванов',
      }),
      expect.objectContaining({ dealId: '2', areaValue: '0.3', ownerSurname: 'Петров' }),
    ]);
  });
});

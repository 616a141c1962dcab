/**
 * Workbooks for the reader's tests: a bank's export as exceljs writes it, and its records as the
 * loader reads them (`openInput`).
 */
import ExcelJS from 'exceljs';
import { openInput, type InputRecord } from '../../src/input/open-input.js';

/** The records of `file` (its first sheet, or `sheet`) as the loader reads them. */
export async function records(file: string, sheet?: string): Promise<InputRecord[]> {
  const input = await openInput(file, sheet === undefined ? {} : { sheet });
  const out: InputRecord[] = [];
  for await (const record of input.records()) out.push(record);
  return out;
}

/** A workbook as a bank's export has it: ids typed as numbers, dates as date cells and as bare serials. */
export async function bankWorkbook(file: string): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  const deals = workbook.addWorksheet('Сделки');
  deals.addRow(['dealId', 'cadastralNumber', 'ownerSnils', 'ownerBirthDate', 'ownerDocIssueDate', 'areaValue', 'ownerSurname']);
  const birth = deals.addRow([
    123456789012345,
    '77:01:0001001:1234',
    11223344595,
    new Date(Date.UTC(1980, 4, 17)),
    45291,
    56.2,
    { richText: [{ text: 'Ива' }, { text: 'нов', font: { bold: true } }] },
  ]);
  birth.getCell(4).numFmt = 'dd.mm.yyyy';
  // A blank row (Excel keeps formatted ones) is no record.
  deals.addRow([]);
  deals.addRow([{ formula: '1+1', result: 2 }, '50:21:0120316:12', '', '', '', 0.1 + 0.2, 'Петров']);
  const other = workbook.addWorksheet('Прочее');
  other.addRow(['dealId', 'ownerSurname']);
  other.addRow(['D-9', 'Сидоров']);
  await workbook.xlsx.writeFile(file);
}

/**
 * The files a person opens in a spreadsheet, opened in LibreOffice headless as Russian Excel
 * opens them (`;`, UTF-8 with a BOM): every id reads back as its exact text, never a number
 * with an exponent or without its leading zeros; dates in a workbook are dates.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { createAtomicFile } from '../../../src/files/atomic-file.js';
import { openInput } from '../../../src/input/open-input.js';
import { createRowsWriter } from '../../../src/input/rejects.js';
import { csvSink } from '../../../src/results/csv-sink.js';
import { createTableFile } from '../../../src/results/table-file.js';
import { harness } from '../../helpers/harness.js';
import { cellsAsShown, RUSSIAN_EXCEL_CSV } from '../../helpers/libreoffice.js';

const UIN = '32127602237600012345';
const COLUMNS = ['row', 'dealId', 'docflowId', 'cadastralNumber', 'paymentUin', 'paymentAmount', 'stateAt', 'errorMessage'];
const RECORD = {
  row: '1',
  dealId: '007',
  docflowId: '123456789012345678',
  cadastralNumber: '77:01:0001001:1234',
  paymentUin: UIN,
  paymentAmount: '2000',
  stateAt: '2026-11-20T09:15:00.000Z',
  errorMessage: 'Не найден объект',
};

// One folder for the file's files, as before.
const it = harness({ per: 'file', label: 'batch-excel' });

/** The shown cells of a file's first two rows, by the header's names. */
async function shown(file: string, infilter?: string): Promise<Record<string, string>> {
  const [header, row] = await cellsAsShown(file, infilter);
  return Object.fromEntries(header!.map((name, i) => [name, row![i] ?? '']));
}

describe('opened in LibreOffice as Russian Excel opens it', { timeout: 180_000 }, () => {
  it('a results CSV written --excel shows every id as its exact text, a 20-digit UIN included', async ({ dir }) => {
    const file = join(dir, 'results.csv');
    const out = await createAtomicFile(file, { through: [csvSink(COLUMNS, true)] });
    await out.write(RECORD);
    await out.commit();
    const cells = await shown(file, RUSSIAN_EXCEL_CSV);
    expect(cells).toMatchObject({
      dealId: '007',
      docflowId: '123456789012345678',
      cadastralNumber: '77:01:0001001:1234',
      paymentUin: UIN,
      paymentAmount: '2000',
      errorMessage: 'Не найден объект',
    });
  });

  it("an attention CSV keeps the input's long and zero-led digits as text", async ({ dir }) => {
    const input = join(dir, 'deals.csv');
    await writeFile(input, 'dealId,ownerSnils,ownerDocNumber,ownerSurname\n0012,01234567890,123456789012,Иванов\n');
    const reading = await openInput(input);
    const file = join(dir, 'deals.attention.csv');
    const writer = createRowsWriter(file, reading, ['row', 'outcome', 'hint', 'errors'], { always: true, excel: true });
    for await (const record of reading.records())
      await writer.write(record, { row: record.row, outcome: 'not_found', hint: 'проверьте адрес', errors: '' });
    await writer.close();
    expect(await shown(file, RUSSIAN_EXCEL_CSV)).toMatchObject({
      row: '1',
      dealId: '0012',
      ownerSnils: '01234567890',
      ownerDocNumber: '123456789012',
      ownerSurname: 'Иванов',
    });
  });

  it('a results workbook shows ids as text, the amount as a number and the time as a date', async ({ dir }) => {
    const file = join(dir, 'results.xlsx');
    const out = await createTableFile(file, COLUMNS);
    await out.write(RECORD);
    await out.commit();
    expect(await shown(file)).toEqual({ ...RECORD, stateAt: '20.11.2026 09:15:00' });
  });
});

/**
 * A bank's Excel workbook run as it is (issue 40, point 1): the samples typed into the second
 * sheet of a workbook, read with --sheet, end as the CSV samples do; the results, attention
 * and rejects files come out as workbooks, and the attention workbook loads back as it is.
 */
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect } from 'vitest';
import { openInput, type InputRecord } from '../../../src/input/open-input.js';
import { RESULTS_FILE_COLUMNS } from '../../../src/domain/outcome.js';
// @ts-expect-error: a plain .mjs module shared with the demo, without types
import { compareWithExpected, readExpectedOutcomes } from '../../../scripts/sample-expectations.mjs';
import { ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';

async function readRecords(file: string, sheet?: string): Promise<InputRecord[]> {
  const input = await openInput(file, sheet === undefined ? {} : { sheet });
  const out: InputRecord[] = [];
  for await (const record of input.records()) out.push(record);
  return out;
}

/** A workbook's first sheet as rows of cell values (exceljs), the header first. */
async function sheetValues(file: string): Promise<unknown[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  const rows: unknown[][] = [];
  workbook.worksheets[0]!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  return rows;
}

// No database of its own (the run's default place); the session the demo gives.
const it = harness({
  label: 'xlsx',
  sandbox: { egronRegions: ['Республика Крым'] },
  engine: 'none',
  session: 'demo-session',
  logLevel: 'warn',
});

describe('realty-batch run on an Excel workbook, through real Redis and the real sandbox', () => {
  it('reads the sheet --sheet names, ends every row as the samples say, and writes results, attention and rejects workbooks', async ({
    dir,
    env,
  }) => {
    const samples = await openInput(join(ROOT, 'samples/deals.csv'));
    const records = [];
    for await (const record of samples.records()) records.push(record);
    const workbook = new ExcelJS.Workbook();
    workbook.addWorksheet('Инструкция').addRow(['Сделки на втором листе']);
    const deals = workbook.addWorksheet('Сделки');
    deals.addRow(samples.header()!);
    for (const record of records) deals.addRow(record.raw.kind === 'cells' ? record.raw.cells : []);
    const input = join(dir, 'deals.xlsx');
    await workbook.xlsx.writeFile(input);

    const out = join(dir, 'results.xlsx');
    const attention = join(dir, 'attention.xlsx');
    const result = await runCli(
      [
        'run',
        input,
        '--sheet',
        'Сделки',
        '--profile',
        'samples/bank-profile.json',
        '--out',
        out,
        '--attention',
        attention,
        '--batch',
        'xlsx-1',
        '--attempts',
        '3',
        '--backoff-ms',
        '50',
      ],
      env,
    );
    expect(result.code, result.stderr).toBe(3);

    const [header, ...rows] = await sheetValues(out);
    expect(header).toEqual([...RESULTS_FILE_COLUMNS]);
    const lines = rows.map((cells) => Object.fromEntries(RESULTS_FILE_COLUMNS.map((c, i) => [c, cells[i] ?? ''])));
    const expected = readExpectedOutcomes(join(ROOT, 'samples/README.md')) as Map<number, { dealId: string; outcome: string }>;
    expect(lines).toHaveLength(expected.size);
    // Ids are text cells; the row number a number cell.
    for (const line of lines) {
      expect(typeof line.dealId).toBe('string');
      expect(typeof line.row).toBe('number');
    }
    expect(
      compareWithExpected(
        expected,
        lines.map((l) => ({ ...l, row: String(l.row as number) })),
      ),
    ).toEqual([]);

    // The refused rows went to <stem>.rejects.xlsx beside the input, which loads back as it is.
    const rejected = await readRecords(join(dir, 'deals.rejects.xlsx'));
    expect(rejected.length).toBeGreaterThan(0);
    // The attention workbook loads back as it is: the same deals as the input's rows it lists.
    const listed = await readRecords(attention);
    expect(listed.length).toBeGreaterThan(0);
    const byDeal = new Map(records.map((r) => [r.fields.dealId, r.fields]));
    for (const record of listed) expect(record.fields).toEqual(byDeal.get(record.fields.dealId));
  });
});

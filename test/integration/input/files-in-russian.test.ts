/**
 * Files for a Russian reader (issue 40, point 6): under `--lang ru` the results written for
 * Excel (CSV and workbook), the attention and rejects files and payments head their columns,
 * name the outcomes and describe the errors in Russian, and each loads back as it is: an
 * attention or rejects file through the loader without a mapping (UTF-8 with a BOM, Windows-1251
 * and a workbook), a results file through the reader `ledger import` uses. The plain results
 * CSV stays the contract in English. Real Redis, a real database and the real sandbox.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { describe, expect } from 'vitest';
import { openInput, type InputRecord } from '../../../src/input/open-input.js';
import { OWN_COLUMN_HEADERS_RU } from '../../../src/input/own-columns.js';
import { OUTCOMES, RESULTS_FILE_COLUMNS, type Outcome } from '../../../src/domain/outcome.js';
import { PAYMENT_COLUMNS } from '../../../src/results/payments.js';
import { readResultsFile } from '../../../src/results/read-results.js';
import { columnHeaders, OUTCOME_NAMES_RU } from '../../../src/results/russian.js';
// @ts-expect-error: a plain .mjs module shared with the demo, without types
import { compareWithExpected, readExpectedOutcomes } from '../../../scripts/sample-expectations.mjs';
import { ROOT, runCli } from '../../helpers/cli.js';
import { readCsvFile } from '../../helpers/csv.js';
import { cellsAsShown, RUSSIAN_EXCEL_CSV } from '../../helpers/libreoffice.js';
import { harness } from '../../helpers/harness.js';

const SAMPLE = join(ROOT, 'samples/deals.csv');
const { row: ROW, outcome: OUTCOME, hint: HINT, errors: ERRORS } = OWN_COLUMN_HEADERS_RU;
const OUTCOME_OF_NAME = new Map(OUTCOMES.map((o) => [OUTCOME_NAMES_RU[o], o]));

async function readRecords(file: string): Promise<{ records: InputRecord[]; unknown: string[]; encoding: string }> {
  const input = await openInput(file);
  const records: InputRecord[] = [];
  for await (const record of input.records()) records.push(record);
  return { records, unknown: input.unknownColumns(), encoding: input.encoding };
}

/** A workbook's first sheet as rows of cell values (exceljs), the header first. */
async function sheetValues(file: string): Promise<unknown[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  const rows: unknown[][] = [];
  workbook.worksheets[0]!.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
  return rows;
}

const it = harness({
  per: 'file',
  label: 'ru-files',
  sandbox: { egronRegions: ['Республика Крым'] },
  session: 'demo-session',
  logLevel: 'warn',
});

describe('files in Russian, written by run, results, load and payments, and loaded back', { timeout: 240_000 }, () => {
  /** The harness's Redis, database, sandbox, session and prefix. */
  let given: Record<string, string>;
  let dir: string;
  let input: string;
  /** The sample's records by dealId, as the loader reads them. */
  let byDeal: Map<string | undefined, Record<string, string>>;
  const env = (): Record<string, string> => ({
    ...given,
    // A locale that says English: only --lang makes these files Russian.
    LANG: 'C.UTF-8',
    LC_ALL: '',
  });
  const expected = readExpectedOutcomes(join(ROOT, 'samples/README.md')) as Map<number, { dealId: string; outcome: string }>;

  it.beforeAll(async ({ env: made, dir: folder }) => {
    given = made;
    dir = folder;
    input = join(dir, 'deals.csv');
    await writeFile(input, readFileSync(SAMPLE));
    byDeal = new Map((await readRecords(input)).records.map((r) => [r.fields.dealId, r.fields]));
    const run = await runCli(
      [
        'run',
        input,
        '--profile',
        'samples/bank-profile.json',
        '--out',
        join(dir, 'results.csv'),
        '--excel',
        '--attention',
        join(dir, 'attention.csv'),
        '--lang',
        'ru',
        '--batch',
        'ru-1',
        '--attempts',
        '3',
        '--backoff-ms',
        '50',
      ],
      env(),
      120_000,
    );
    expect(run.code, run.stderr).toBe(3);
  });

  it('writes the results for Excel with Russian headers and outcome names, which read back as the codes', async () => {
    const bytes = readFileSync(join(dir, 'results.csv'));
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const rows = readCsvFile(join(dir, 'results.csv'));
    expect(Object.keys(rows[0]!)).toEqual(columnHeaders(RESULTS_FILE_COLUMNS, 'ru'));
    expect(rows.map((r) => r['ID сделки'])).toEqual([...expected.values()].map((e) => e.dealId));
    for (const r of rows) expect(OUTCOME_OF_NAME.has(r[OUTCOME]!), r[OUTCOME]).toBe(true);
    const invalid = rows.find((r) => r['ID сделки'] === 'NSK-2026-000127')!;
    expect(invalid[OUTCOME]).toBe('ошибка в данных');
    expect(invalid['Описание ошибки']).toBe('строка не прошла проверку и не отправлялась — ownerSnils: не сходится контрольное число');

    // Read back as `ledger import` reads it: the column names and the outcome codes, as the samples expect.
    const reader = readResultsFile(join(dir, 'results.csv'));
    expect(await reader.columns()).toEqual([...RESULTS_FILE_COLUMNS]);
    const lines: Array<Record<string, string>> = [];
    for await (const line of reader.lines()) lines.push({ ...line.cells });
    expect(compareWithExpected(expected, lines)).toEqual([]);
    expect(lines.find((l) => l.outcome === 'suspended')!.docflowId).toMatch(/\S/);
    // And `ledger import` takes it: every submitted row's docflow is the one the ledger has.
    const imported = await runCli(['ledger', 'import', join(dir, 'results.csv'), '--json'], env());
    expect(imported.code, imported.stderr).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ imported: 0, known: 17, conflicts: [], problems: [], skipped: 7 });
  });

  it('writes the attention file with Russian columns of ours, which loads back without a mapping, with the same deals', async () => {
    const file = join(dir, 'attention.csv');
    const rows = readCsvFile(file);
    expect(Object.keys(rows[0]!).slice(0, 5)).toEqual([ROW, OUTCOME, HINT, ERRORS, 'dealId']);
    // 7 refused rows and the 4 docflows that wait for signatures.
    expect(rows).toHaveLength(11);
    const outcomes = rows.map((r) => OUTCOME_OF_NAME.get(r[OUTCOME]!));
    expect(outcomes.filter((o) => o === 'suspended')).toHaveLength(4);
    expect(outcomes).not.toContain(undefined);
    for (const r of rows) expect(r[HINT]).toMatch(/[а-яё]{3}/);
    const conflict = rows.find((r) => r[ROW] === '18')!;
    expect(conflict[ERRORS]).toBe(
      'этот dealId уже принадлежит другому объекту; строка не отправлялась — dealId: повторяет dealId строки 2, где он указан для другого объекта',
    );

    const back = await readRecords(file);
    expect(back.encoding).toBe('utf8-bom');
    expect(back.unknown).toEqual([]);
    expect(back.records).toHaveLength(11);
    for (const record of back.records) expect(record.fields).toEqual(byDeal.get(record.fields.dealId));
    // As `load` takes it: no column of ours is unknown, none is read as a field.
    const dry = await runCli(
      ['load', file, '--profile', 'samples/bank-profile.json', '--dry-run', '--rejects', join(dir, 'again.rejects.csv')],
      env(),
    );
    expect(dry.stdout + dry.stderr).not.toContain('unknown column');
    expect(dry.code, dry.stderr).toBe(3);
  });

  it("writes the rejects file in the input's own form with Russian columns and problems, which loads back as it is", async () => {
    const file = join(dir, 'deals.rejects.csv');
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n', 1)[0]).toMatch(new RegExp(`^${ROW},${ERRORS},dealId,`));
    const rows = readCsvFile(file);
    expect(rows.map((r) => r[ROW])).toEqual(['9', '14', '18']);
    expect(rows[0]![ERRORS]).toBe('ownerSnils: не сходится контрольное число');
    expect(rows[1]![ERRORS]).toContain('ownerBirthPlace: обязательное поле, не заполнено');
    const back = await readRecords(file);
    expect(back.unknown).toEqual([]);
    expect(back.records.map((r) => r.fields.dealId)).toEqual(['NSK-2026-000127', 'SPB-2026-010079', 'MSK-2026-004511']);
    for (const record of back.records.slice(0, 2)) expect(record.fields).toEqual(byDeal.get(record.fields.dealId));
  });

  it('writes a Windows-1251 rejects file in Windows-1251 with the Russian columns, which loads back as it is', async () => {
    const cp1251 = join(dir, 'deals-1251.csv');
    // As a core system exports it: Windows-1251, `;`, CRLF.
    const sample = (parse(readFileSync(SAMPLE)) as string[][]).map((cells) => cells.join(';')).join('\r\n') + '\r\n';
    expect(sample).not.toContain('"');
    await writeFile(cp1251, iconv.encode(sample, 'windows-1251'));
    const rejects = join(dir, 'deals-1251.rejects.csv');
    const load = await runCli(['load', cp1251, '--profile', 'samples/bank-profile.json', '--dry-run', '--lang', 'ru'], env());
    expect(load.code, load.stderr).toBe(3);
    const bytes = readFileSync(rejects);
    const decoded = iconv.decode(bytes, 'windows-1251');
    expect(decoded.split('\n', 1)[0]).toMatch(new RegExp(`^${ROW};${ERRORS};dealId;`));
    expect(decoded).toContain('не сходится контрольное число');
    expect(bytes.includes(Buffer.from(ROW, 'utf8'))).toBe(false);
    const back = await readRecords(rejects);
    expect(back.encoding).toBe('windows-1251');
    expect(back.unknown).toEqual([]);
    expect(back.records.map((r) => r.fields.dealId)).toEqual(['NSK-2026-000127', 'SPB-2026-010079', 'MSK-2026-004511']);
    expect(back.records[0]!.fields).toEqual(byDeal.get('NSK-2026-000127'));
  });

  it('writes results and attention workbooks in Russian; the attention workbook loads back as it is', async () => {
    const out = join(dir, 'results.xlsx');
    const attention = join(dir, 'attention.xlsx');
    const again = await runCli(['results', 'ru-1', '--out', out, '--attention', attention, '--lang', 'ru'], env());
    expect(again.code, again.stderr).toBe(3);
    const [header, ...rows] = await sheetValues(out);
    expect(header).toEqual(columnHeaders(RESULTS_FILE_COLUMNS, 'ru'));
    const outcomes = rows.map((cells) => OUTCOME_OF_NAME.get(cells[2] as string));
    expect(outcomes).toEqual([...expected.values()].map((e) => e.outcome as Outcome));
    // The row number stays a number Excel can sum, the dealId text.
    expect(typeof rows[0]![0]).toBe('number');
    expect(rows[0]![1]).toBe('NSK-2026-000123');

    const [attentionHeader] = await sheetValues(attention);
    expect(attentionHeader!.slice(0, 5)).toEqual([ROW, OUTCOME, HINT, ERRORS, 'dealId']);
    const back = await readRecords(attention);
    expect(back.unknown).toEqual([]);
    expect(back.records).toHaveLength(11);
    for (const record of back.records) expect(record.fields).toEqual(byDeal.get(record.fields.dealId));
  });

  it('keeps the plain results CSV in English codes under --lang ru, and English files under --lang en', async () => {
    const plain = join(dir, 'plain.csv');
    const english = join(dir, 'english.xlsx');
    expect((await runCli(['results', 'ru-1', '--out', plain, '--lang', 'ru'], env())).code).toBe(3);
    expect((await runCli(['results', 'ru-1', '--out', english, '--lang', 'en'], env())).code).toBe(3);
    expect(readFileSync(plain, 'utf8').split('\n', 1)[0]).toBe(RESULTS_FILE_COLUMNS.join(','));
    expect(readCsvFile(plain).map((r) => r.outcome)).toEqual([...expected.values()].map((e) => e.outcome));
    const [header, first] = await sheetValues(english);
    expect(header).toEqual([...RESULTS_FILE_COLUMNS]);
    expect(first![2]).toBe('queued');
  });

  it('heads the payments file in Russian under --lang ru', async () => {
    const file = join(dir, 'payments.csv');
    const payments = await runCli(['payments', 'ru-1', '--out', file, '--lang', 'ru'], env());
    expect(payments.code, payments.stderr).toBe(0);
    expect(
      readFileSync(file, 'utf8')
        .replace(/^\uFEFF/, '')
        .split('\r\n', 1)[0],
    ).toBe(columnHeaders(PAYMENT_COLUMNS, 'ru').join(';'));
    expect(columnHeaders(PAYMENT_COLUMNS, 'ru')).toEqual([
      'ID сделки',
      'ID документооборота',
      'УИН',
      'Сумма, руб.',
      'Плательщик',
      'Ждёт с',
    ]);
  });

  it('shows the Russian results CSV and attention workbook in LibreOffice as Russian Excel opens them', async () => {
    const [header, first] = await cellsAsShown(join(dir, 'results.csv'), RUSSIAN_EXCEL_CSV);
    expect(header).toEqual(columnHeaders(RESULTS_FILE_COLUMNS, 'ru'));
    expect(first!.slice(0, 3)).toEqual(['1', 'NSK-2026-000123', 'принят']);
    const [attentionHeader, attentionRow] = await cellsAsShown(join(dir, 'attention.xlsx'));
    expect(attentionHeader!.slice(0, 5)).toEqual([ROW, OUTCOME, HINT, ERRORS, 'dealId']);
    expect(attentionRow![0]).toBe('9');
    expect(attentionRow![1]).toBe('ошибка в данных');
    expect(attentionRow![3]).toBe('строка не прошла проверку и не отправлялась — ownerSnils: не сходится контрольное число');
  });
});

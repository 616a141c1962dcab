/**
 * Real-world shapes of the sample deals (samples/deals.csv), written the way
 * banks' systems and Excel write them: Windows-1251 with `;` and CRLF, UTF-8
 * with BOM and tabs, quoted line breaks, padded columns, JSON and JSON Lines.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import iconv from 'iconv-lite';
import { ROOT } from './cli.js';

export const SAMPLE = parse(readFileSync(join(ROOT, 'samples/deals.csv')), { relax_column_count: false }) as string[][];
export const HEADER = SAMPLE[0]!;
export const ROWS = SAMPLE.slice(1);
/** What samples/README.md says of the rows: 3 of the 24 are invalid. */
export const SAMPLE_READ = ROWS.length;
export const SAMPLE_INVALID = 3;

export function csvText(rows: string[][], options: { delimiter?: string; eol?: string; header?: string[] } = {}): string {
  return stringify([options.header ?? HEADER, ...rows], {
    delimiter: options.delimiter ?? ',',
    record_delimiter: options.eol === '\r\n' ? 'windows' : 'unix',
  });
}

export function records(rows: string[][] = ROWS, header: string[] = HEADER): Array<Record<string, string>> {
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
}

export interface Fixture {
  name: string;
  file: string;
  /** A deal id and a field whose Cyrillic value must come through exactly. */
  check?: { dealId: string; field: 'region' | 'street'; value: string };
}

const cell = (dealId: string, field: string): string => {
  const row = ROWS.find((r) => r[0] === dealId)!;
  return row[HEADER.indexOf(field)]!;
};

export async function writeFixtures(dir: string): Promise<Fixture[]> {
  const firstId = ROWS[0]![0]!;
  const check = { dealId: firstId, field: 'region' as const, value: cell(firstId, 'region') };
  const out: Fixture[] = [];
  const put = async (name: string, content: string | Buffer, withCheck = true): Promise<void> => {
    const file = join(dir, name);
    await writeFile(file, content);
    out.push(withCheck ? { name, file, check } : { name, file });
  };

  await put('win1251-semicolon-crlf.csv', iconv.encode(csvText(ROWS, { delimiter: ';', eol: '\r\n' }), 'win1251'));
  await put('utf8-bom-tab.csv', `\uFEFF${csvText(ROWS, { delimiter: '\t' })}`);

  // Quotes, delimiters and a line break inside quoted fields, as Excel writes them.
  const quoted = ROWS.map((r) => [...r]);
  const bp = HEADER.indexOf('ownerBirthPlace');
  quoted[0]![bp] = 'г. Новосибирск, "Ленинский" район\nвторая строка';
  await put('quoted-breaks.csv', csvText(quoted));

  // Excel pads every line with empty columns and leaves blank lines at the end.
  const padded = csvText(ROWS)
    .split('\n')
    .filter(Boolean)
    .map((line) => `${line},,,`)
    .join('\r\n');
  await put('trailing-empty-columns.csv', `${padded}\r\n,,,\r\n\r\n\r\n`);

  await put('array.json', JSON.stringify(records(), null, 2));
  await put('deals-object.json', JSON.stringify({ exportedAt: '2026-11-20', deals: records() }));
  const lines = records().map((r) => JSON.stringify(r));
  lines.splice(5, 0, '');
  await put('blank-line.jsonl', `${lines.join('\n')}\n\n`);
  return out;
}

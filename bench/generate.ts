/**
 * Deals for the bench, made from the sample rows (samples/deals.csv): the same
 * people, addresses and field widths as a real export, each row with its own
 * dealId, SNILS (valid check digits), passport number and agreement UUIDs, so
 * every row passes validation and every requestId is new to the sandbox.
 * Seeded: the same arguments write the same bytes.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import iconv from 'iconv-lite';
import { snilsCheckDigits } from '../src/input/checksums.js';
import { createRandom } from '../src/sandbox/faults.js';
import { CADASTRAL, DEAL_ID, FIRST_ROWS, HEADER, INVALID_SAMPLES, RESOLVING_SAMPLES } from './sample-deals.js';

export { HEADER };
const col = (name: string): number => HEADER.indexOf(name);

/** Every valid sample row: for loading (addresses need not resolve). */
const VALID = FIRST_ROWS.filter((r) => !INVALID_SAMPLES.includes(r[DEAL_ID]!));
/** Rows whose deal goes through suggest and then gets a docflow: for the worker figures. */
const SUGGESTED = VALID.filter((r) => RESOLVING_SAMPLES.has(r[DEAL_ID]!) && r[CADASTRAL] === '');

const SNILS = [col('ownerSnils'), col('owner2Snils')];
const DOC_NUMBER = [col('ownerDocNumber'), col('owner2DocNumber')];
const CONTENT_ID = col('agreementContentId');
const SIGNATURES = col('agreementSignatureIds');

const HEX = '0123456789abcdef';

export interface DealGenerator {
  /** The 0-based `index`-th row: a copy of a template with its own identifiers. */
  row(index: number): string[];
}

export interface GenerateOptions {
  /** Unique per file: dealIds are `<region>-<tag>-<index>`, so no two files share a requestId. */
  tag: string;
  /** `suggest`: only rows that resolve through suggest (the worker figures); default every valid row. */
  kind?: 'all' | 'suggest';
  seed?: number;
}

export function createDealGenerator(options: GenerateOptions): DealGenerator {
  const templates = options.kind === 'suggest' ? SUGGESTED : VALID;
  const random = createRandom(options.seed ?? 20261121);
  const digits = (n: number): string => {
    let s = '';
    for (let i = 0; i < n; i++) s += String(Math.floor(random() * 10));
    return s;
  };
  const uuid = (): string => {
    let s = '';
    for (let i = 0; i < 32; i++) {
      const v = i === 12 ? 4 : i === 16 ? 8 + Math.floor(random() * 4) : Math.floor(random() * 16);
      s += HEX[v];
      if (i === 7 || i === 11 || i === 15 || i === 19) s += '-';
    }
    return s;
  };
  const snils = (like: string): string => {
    // Bodies above 001-001-998 carry check digits; keep the template's way of writing it.
    const body = String(2_000_000 + Math.floor(random() * 997_000_000)).padStart(9, '0');
    const check = snilsCheckDigits(body);
    return /\D/.test(like) ? `${body.slice(0, 3)}-${body.slice(3, 6)}-${body.slice(6)} ${check}` : `${body}${check}`;
  };
  return {
    row(index) {
      const template = templates[index % templates.length]!;
      const row = [...template];
      row[DEAL_ID] = `${template[DEAL_ID]!.slice(0, 3)}-${options.tag}-${String(index + 1).padStart(7, '0')}`;
      for (const i of SNILS) if (row[i]) row[i] = snils(row[i]!);
      for (const i of DOC_NUMBER) if (row[i]) row[i] = digits(6);
      row[CONTENT_ID] = uuid();
      if (row[SIGNATURES]) row[SIGNATURES] = row[SIGNATURES]!.replace(/[0-9a-f-]{36}/g, () => uuid());
      return row;
    },
  };
}

export type FileKind = 'csv-utf8' | 'csv-1251' | 'jsonl';

export interface WriteDealsOptions extends GenerateOptions {
  file: string;
  rows: number;
  format: FileKind;
}

function csvCell(value: string, delimiter: string): string {
  return value.includes(delimiter) || value.includes('"') || value.includes('\n') || value.includes('\r')
    ? `"${value.replaceAll('"', '""')}"`
    : value;
}

/**
 * Writes `rows` deals: UTF-8 with `,` and LF; Windows-1251 with `;` and CRLF (as
 * 1C writes them); or JSON Lines with the non-empty fields of each row.
 * Resolves with the file's size in bytes.
 */
export async function writeDeals(options: WriteDealsOptions): Promise<number> {
  const generator = createDealGenerator(options);
  const out = createWriteStream(options.file);
  let bytes = 0;
  const put = async (text: string): Promise<void> => {
    const chunk = options.format === 'csv-1251' ? iconv.encode(text, 'win1251') : Buffer.from(text, 'utf8');
    bytes += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  };
  const delimiter = options.format === 'csv-1251' ? ';' : ',';
  const eol = options.format === 'csv-1251' ? '\r\n' : '\n';
  const line = (cells: string[]): string => cells.map((c) => csvCell(c, delimiter)).join(delimiter) + eol;
  if (options.format !== 'jsonl') await put(line(HEADER));
  let text = '';
  for (let i = 0; i < options.rows; i++) {
    const row = generator.row(i);
    if (options.format === 'jsonl') {
      const record: Record<string, string> = {};
      HEADER.forEach((h, c) => {
        if (row[c]) record[h] = row[c]!;
      });
      text += `${JSON.stringify(record)}\n`;
    } else text += line(row);
    if (text.length > 256 * 1024) {
      await put(text);
      text = '';
    }
  }
  await put(text);
  out.end();
  await once(out, 'close');
  return bytes;
}

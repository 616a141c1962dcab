import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { parse } from 'csv-parse/sync';
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { openInput, type InputFile, type InputRecord } from '../../src/input/open-input.js';
import { createRejectsWriter, createRowsWriter } from '../../src/input/rejects.js';
import { ATTENTION_COLUMNS } from '../../src/results/attention.js';
import { hintFor, stateHintFor } from '../../src/results/hints.js';
import { ATTENTION_OUTCOMES, type OutcomeRecord } from '../../src/domain/outcome.js';
import { ROOT } from '../helpers/cli.js';

const SAMPLE = join(ROOT, 'samples/deals.csv');

async function read(file: string): Promise<{ input: InputFile; records: InputRecord[] }> {
  const input = await openInput(file);
  const records: InputRecord[] = [];
  for await (const record of input.records()) records.push(record);
  return { input, records };
}

/** An attention file of every record of `file`, as writeAttention writes it. */
async function attentionOf(file: string, out: string, options: { excel?: boolean } = {}): Promise<InputRecord[]> {
  const { input, records } = await read(file);
  const writer = createRowsWriter(out, input, ATTENTION_COLUMNS, { always: true, ...options });
  for (const record of records) await writer.write(record, { row: record.row, outcome: 'invalid', hint: 'исправьте', errors: 'dealId: x' });
  await writer.close();
  return records;
}

const record = (outcome: OutcomeRecord['outcome'], extra: Partial<OutcomeRecord> = {}): OutcomeRecord => ({
  row: 1,
  dealId: 'D-1',
  outcome,
  attempts: 8,
  finishedAt: '2026-11-24T00:00:00.000Z',
  ...extra,
});

describe('the hints, in Russian and English', () => {
  const cases: OutcomeRecord[] = [
    ...[...ATTENTION_OUTCOMES].map((o) => record(o)),
    record('ambiguous', { candidates: ['54:35:012345:10', '54:35:012345:11'] }),
    record('not_found', { candidates: ['54:35:012345:10'] }),
    record('failed', { errorCode: 'ERR_UNCERTAIN' }),
    record('invalid', { errorCode: 'DEAL_ID_CONFLICT', errorMessage: 'dealId: repeats the dealId of row 2' }),
    record('invalid', { errorCode: 'DUPLICATE_ROW', errorMessage: 'dealId: repeats row 2: the same dealId for the same property' }),
  ];

  it('has a Russian sentence for every outcome and error code an English one has, keeping commands and columns as typed', () => {
    for (const r of cases) {
      const en = hintFor(r, 'night', 'en');
      const ru = hintFor(r, 'night', 'ru');
      expect(en, r.outcome).not.toBe('');
      expect(ru, r.outcome).toMatch(/[а-яё]{3}/);
      // Nothing English left but what the clerk types: the command, the input's column names (ours is «Ошибки»).
      expect(ru.replace(/realty-batch retry night( --outcome forbidden --force)?|cadastralNumber|dealId/g, '')).not.toMatch(/[a-z]/i);
      for (const kept of ['realty-batch retry night', 'cadastralNumber', '54:35:012345:10']) {
        expect(ru.includes(kept), `${r.outcome}: ${kept}`).toBe(en.includes(kept));
      }
    }
  });

  it("names what the registry refused by the row's type, and the flags that file it again", () => {
    const refused = (type: string, lang: 'en' | 'ru') =>
      stateHintFor(record('queued', { type: type as OutcomeRecord['type'], state: 'error', docflowId: 'f-1' }), 'night', lang);
    expect(refused('encumbrance_request', 'en')).toBe(
      'the registry refused the registration (errors); correct the deal, then load this file again with --resubmit',
    );
    expect(refused('cessation_encumbrance_request', 'en')).toContain('refused the lift (check recordNumber and recordDate)');
    expect(refused('cessation_encumbrance_request', 'en')).toContain('with --type lift --resubmit');
    expect(refused('object_request', 'en')).toContain('with --type extract --again');
    expect(refused('cessation_encumbrance_request', 'ru')).toContain('реестр отказал в погашении');
    expect(refused('encumbrance_request', 'ru')).toContain('реестр отказал в регистрации');
  });

  it('keeps the English as it was, and English is the default', () => {
    const ambiguous = record('ambiguous', { candidates: ['54:35:012345:10', '54:35:012345:11'] });
    expect(hintFor(ambiguous, 'night')).toBe('put one of 54:35:012345:10, 54:35:012345:11 in cadastralNumber');
    expect(hintFor(ambiguous, 'night', 'ru')).toBe(
      'укажите в колонке cadastralNumber один из кадастровых номеров: 54:35:012345:10, 54:35:012345:11',
    );
    expect(hintFor(record('failed'), 'night')).toBe('the gateway failed after 8 tries; run later: realty-batch retry night');
    expect(hintFor(record('failed', { attempts: 1 }), 'night', 'ru')).toMatch(/после 1 попытки;/);
    expect(hintFor(record('failed', { attempts: 8 }), 'night', 'ru')).toMatch(/после 8 попыток;/);
    expect(hintFor(record('failed', { attempts: 21 }), 'night', 'ru')).toMatch(/после 21 попытки;/);
    expect(hintFor(record('failed', { attempts: 11 }), 'night', 'ru')).toMatch(/после 11 попыток;/);
  });

  it("tells a row whose dealId is another property's to take its own dealId, and a repeated row that it repeats row N", () => {
    // Loaded again unchanged such a row can never be sent: "correct the fields" would send the clerk round in a circle.
    const conflict = record('invalid', { errorCode: 'DEAL_ID_CONFLICT', errorMessage: 'dealId: repeats the dealId of row 2' });
    expect(hintFor(conflict, 'night')).toBe(
      "this dealId is another property's (see errors): give this deal its own dealId, correct any other field named in errors, then load this file again",
    );
    expect(hintFor(conflict, 'night', 'ru')).toMatch(/^этот dealId принадлежит другому объекту .*присвойте сделке собственный dealId/);
    const repeated = record('invalid', {
      errorCode: 'DUPLICATE_ROW',
      errorMessage: 'dealId: repeats row 2: the same dealId for the same property',
    });
    expect(hintFor(repeated, 'night')).toBe(
      'this row duplicates row 2 (the same deal for the same property), which carries the deal: remove this row',
    );
    expect(hintFor(repeated, 'night', 'ru')).toMatch(/^эта строка повторяет строку 2 .*удалите эту строку$/);
    expect(hintFor(record('invalid', { errorCode: 'INVALID' }), 'night')).toBe(
      'correct the fields named in errors, then load this file again',
    );
  });

  it('tells a row whose file changed after the load to check the file, and how to send it as it is now', () => {
    const changed = record('invalid', { errorCode: 'DOCUMENT_CHANGED', errorMessage: 'agreementFile: changed on disk after the load' });
    expect(hintFor(changed, 'night')).toMatch(
      /^a file named in errors changed on disk after the load, so nothing was sent: check it is the right file/,
    );
    expect(hintFor(changed, 'night')).toContain('realty-batch retry night --outcome invalid --force');
    expect(hintFor(changed, 'night', 'ru')).toMatch(/^файл, указанный в колонке «Ошибки», изменился на диске после загрузки/);
    expect(hintFor(changed, 'night', 'ru')).toContain('realty-batch retry night --outcome invalid --force');
  });
});

describe('the attention and rejects files: our columns first, the input after', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-attention-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('puts row, outcome, hint and errors first, then the input columns as read', async () => {
    const out = join(dir, 'attention.csv');
    const records = await attentionOf(SAMPLE, out);
    const [header, ...rows] = parse(await readFile(out)) as string[][];
    const { input } = await read(SAMPLE);
    expect(header).toEqual(['row', 'outcome', 'hint', 'errors', ...input.header()!]);
    expect(rows).toHaveLength(records.length);
    rows.forEach((cells, i) => {
      expect(cells.slice(0, 4)).toEqual([String(records[i]!.row), 'invalid', 'исправьте', 'dealId: x']);
      expect(cells.slice(4)).toEqual(records[i]!.raw.kind === 'cells' ? records[i]!.raw.cells : []);
    });
  });

  it('loads an attention file back without an unknown column and with the same deals; written again, our columns are not repeated', async () => {
    const first = join(dir, 'attention.csv');
    const records = await attentionOf(SAMPLE, first);
    const back = await read(first);
    expect(back.input.unknownColumns()).toEqual([]);
    expect(back.records.map((r) => r.fields)).toEqual(records.map((r) => r.fields));
    expect(back.records.map((r) => r.problems)).toEqual(records.map((r) => r.problems));

    const second = join(dir, 'attention-2.csv');
    await attentionOf(first, second);
    expect(await readFile(second, 'utf8')).toBe(await readFile(first, 'utf8'));
  });

  it('replaces the trailing outcome, errors and hint of an attention file of the old layout', async () => {
    const sample = await readFile(SAMPLE, 'utf8');
    const [head, ...lines] = sample.trimEnd().split('\n');
    const old = join(dir, 'old.csv');
    await writeFile(old, [`${head},outcome,errors,hint`, ...lines.map((l) => `${l},invalid,x,y`)].join('\n') + '\n');
    const before = await read(old);
    expect(before.input.unknownColumns()).toEqual([]);
    const out = join(dir, 'attention.csv');
    await attentionOf(old, out);
    const [header] = parse(await readFile(out)) as string[][];
    expect(header).toEqual(['row', 'outcome', 'hint', 'errors', ...head!.split(',')]);
  });

  it('never reads a column of ours as a deal field, even when the mapping names it', async () => {
    const file = join(dir, 'mapped.csv');
    const sample = await readFile(SAMPLE, 'utf8');
    const [head, ...lines] = sample.trimEnd().split('\n');
    await writeFile(file, [`row,${head}`, ...lines.map((l, i) => `${i + 1},${l}`)].join('\n') + '\n');
    const input = await openInput(file, { mapping: { columns: new Map([['row', 'dealId']]), defaults: {} } });
    const records: InputRecord[] = [];
    for await (const r of input.records()) records.push(r);
    expect(records[0]!.fields.dealId).not.toBe('1');
    expect(input.unknownColumns()).toEqual([]);
  });

  it('keeps Excel files as they are: Windows-1251, ";" and CRLF, the Russian hints in Windows-1251', async () => {
    const sample = await readFile(SAMPLE, 'utf8');
    const text = (parse(sample) as string[][]).map((cells) => cells.join(';')).join('\r\n') + '\r\n';
    const file = join(dir, 'excel.csv');
    expect(text).toMatch(/[а-яё]/i);
    await writeFile(file, iconv.encode(text, 'windows-1251'));
    const out = join(dir, 'attention.csv');
    const records = await attentionOf(file, out);
    const bytes = await readFile(out);
    const decoded = iconv.decode(bytes, 'windows-1251');
    expect(decoded.startsWith('row;outcome;hint;errors;dealId;')).toBe(true);
    expect(decoded.split('\r\n')[1]).toMatch(/^1;invalid;исправьте;dealId: x;/);
    expect(bytes.includes(Buffer.from('исправьте', 'utf8'))).toBe(false);
    const back = await read(out);
    expect(back.input).toMatchObject({ encoding: 'windows-1251', delimiter: ';', lineEnding: '\r\n' });
    expect(back.input.unknownColumns()).toEqual([]);
    expect(back.records.map((r) => r.fields)).toEqual(records.map((r) => r.fields));
  });

  it("writes Russian Excel's form when asked (BOM, ';', CRLF) and loads it back with the same deals; written again, the same bytes", async () => {
    const out = join(dir, 'attention.csv');
    const records = await attentionOf(SAMPLE, out, { excel: true });
    const bytes = await readFile(out);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8').slice(1);
    expect(text.startsWith('row;outcome;hint;errors;dealId;')).toBe(true);
    expect(text.split('\r\n')[1]).toMatch(/^1;invalid;исправьте;dealId: x;/);
    expect(text.replace(/\r\n/g, '')).not.toContain('\n');
    const back = await read(out);
    expect(back.input).toMatchObject({ encoding: 'utf8-bom', delimiter: ';', lineEnding: '\r\n' });
    expect(back.input.unknownColumns()).toEqual([]);
    expect(back.records.map((r) => r.fields)).toEqual(records.map((r) => r.fields));
    expect(back.records.map((r) => r.problems)).toEqual(records.map((r) => r.problems));

    const again = join(dir, 'attention-2.csv');
    await attentionOf(out, again, { excel: true });
    expect((await readFile(again)).equals(bytes)).toBe(true);
  });

  it("keeps a Windows-1251 input in Windows-1251 in Excel's form (Russian Excel reads its own code page), and JSON as JSON", async () => {
    const sample = await readFile(SAMPLE, 'utf8');
    const file = join(dir, 'cp1251.csv');
    await writeFile(file, iconv.encode(sample, 'windows-1251'));
    const out = join(dir, 'attention.csv');
    const records = await attentionOf(file, out, { excel: true });
    const back = await read(out);
    expect(back.input).toMatchObject({ encoding: 'windows-1251', delimiter: ';', lineEnding: '\r\n' });
    expect(back.records.map((r) => r.fields)).toEqual(records.map((r) => r.fields));

    const json = join(dir, 'deals.json');
    await writeFile(json, JSON.stringify([{ dealId: 'D-1', city: 'Новосибирск' }]));
    const jsonOut = join(dir, 'attention.json');
    await attentionOf(json, jsonOut, { excel: true });
    expect(JSON.parse(await readFile(jsonOut, 'utf8'))).toEqual([
      { row: 1, outcome: 'invalid', hint: 'исправьте', errors: 'dealId: x', dealId: 'D-1', city: 'Новосибирск' },
    ]);
  });

  it('gives the rejects file row and errors first, and a JSON file our fields first', async () => {
    const { input, records } = await read(SAMPLE);
    const rejects = join(dir, 'deals.rejects.csv');
    const writer = createRejectsWriter(rejects, input);
    await writer.write(records[2]!, [{ field: 'dealId', message: 'is required' }]);
    await writer.close();
    const [header, refused] = parse(await readFile(rejects)) as string[][];
    expect(header).toEqual(['row', 'errors', ...input.header()!]);
    expect(refused!.slice(0, 2)).toEqual(['3', 'dealId: is required']);

    const json = join(dir, 'deals.json');
    await writeFile(json, JSON.stringify([{ dealId: 'D-1', outcome: 'stale', row: 9, city: 'Новосибирск' }]));
    const jsonIn = await read(json);
    expect(jsonIn.input.unknownColumns()).toEqual([]);
    const out = join(dir, 'attention.json');
    const w = createRowsWriter(out, jsonIn.input, ATTENTION_COLUMNS, { always: true });
    await w.write(jsonIn.records[0]!, { row: 1, outcome: 'invalid', hint: 'h', errors: 'e' });
    await w.close();
    const [written] = JSON.parse(await readFile(out, 'utf8')) as Array<Record<string, unknown>>;
    expect(Object.keys(written!)).toEqual(['row', 'outcome', 'hint', 'errors', 'dealId', 'city']);
    expect(written).toMatchObject({ row: 1, outcome: 'invalid', dealId: 'D-1' });
  });
});

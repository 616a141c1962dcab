import { createReadStream, type ReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline, Readable } from 'node:stream';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { createDecoder, type InputEncoding } from '../../src/input/decode.js';
import { flattenRecord, readJsonLines, readJsonRecords, type JsonItem } from '../../src/input/read-json.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'realty-batch-json-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Reader = (text: NodeJS.ReadableStream, file: string) => AsyncGenerator<JsonItem>;

async function collect(items: AsyncGenerator<JsonItem>): Promise<JsonItem[]> {
  const out: JsonItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** Reads text handed over in the given pieces (default: one piece). */
function read(reader: Reader, pieces: string | string[], file = 'deals.json'): Promise<JsonItem[]> {
  return collect(reader(Readable.from(typeof pieces === 'string' ? [pieces] : pieces), file));
}

async function failure(reader: Reader, pieces: string | string[], file = 'deals.json'): Promise<InputError> {
  const err = await read(reader, pieces, file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InputError);
  return err as InputError;
}

async function fileOf(name: string, content: string | Buffer): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, content);
  return file;
}

/** The file as the loader opens it: fs stream → decoder, joined by pipeline. */
function decoded(file: string, encoding: InputEncoding = 'utf8'): { text: NodeJS.ReadableStream; source: ReadStream } {
  const source = createReadStream(file, { highWaterMark: 1024 });
  const text = pipeline(source, createDecoder(encoding, file), () => {});
  return { text, source };
}

const deal = (i: number) => ({ dealId: `D-${i}`, region: 'Новосибирская область', areaValue: 45.6, house: 14 });

describe('readJsonRecords', () => {
  it('yields the records of a top-level array with 1-based rows and their text', async () => {
    const items = await read(readJsonRecords, JSON.stringify([deal(1), deal(2), deal(3)], null, 2));
    expect(items.map((i) => i.row)).toEqual([1, 2, 3]);
    expect(items[1]).toEqual({ row: 2, value: deal(2), raw: JSON.stringify(deal(2)) });
  });

  it('yields the records of {"deals": [...]} and skips the other keys, however nested', async () => {
    const text = JSON.stringify({ meta: { bank: 'X', list: [[1], { a: [] }] }, deals: [deal(1), deal(2)], total: 2 });
    const items = await read(readJsonRecords, text.split(''));
    expect(items).toEqual([
      { row: 1, value: deal(1), raw: JSON.stringify(deal(1)) },
      { row: 2, value: deal(2), raw: JSON.stringify(deal(2)) },
    ]);
  });

  it('keeps numbers exact enough for their text: 45.6 and 12-digit integers', async () => {
    const [item] = await read(readJsonRecords, '[{"areaValue": 45.6, "dealId": 123456789012, "x": 1e2}]');
    expect(flattenRecord(item!.value!).fields).toEqual({ areaValue: '45.6', dealId: '123456789012', x: '100' });
  });

  it('yields an item that is not an object with its problem, still counting it', async () => {
    const items = await read(readJsonRecords, '[1, {"dealId": "D-2"}, "x", null, [3]]');
    expect(items).toEqual([
      { row: 1, problem: 'is not an object', raw: '1' },
      { row: 2, value: { dealId: 'D-2' }, raw: '{"dealId":"D-2"}' },
      { row: 3, problem: 'is not an object', raw: '"x"' },
      { row: 4, problem: 'is not an object', raw: 'null' },
      { row: 5, problem: 'is not an object', raw: '[3]' },
    ]);
  });

  it('yields [1, 2] as two broken records', async () => {
    expect(await read(readJsonRecords, '[1, 2]')).toEqual([
      { row: 1, problem: 'is not an object', raw: '1' },
      { row: 2, problem: 'is not an object', raw: '2' },
    ]);
  });

  it('refuses a top level that is neither an array nor an object with a "deals" array', async () => {
    expect((await failure(readJsonRecords, '{"foo": 1}')).message).toBe(
      'deals.json is an object without a "deals" array: it holds no deals.',
    );
    expect((await failure(readJsonRecords, '42')).message).toMatch(/^deals\.json holds a number, not an array/);
    expect((await failure(readJsonRecords, '"x"')).message).toMatch(/^deals\.json holds a string, not an array/);
    expect((await failure(readJsonRecords, '{"deals": {"a": 1}}')).message).toBe('deals.json has "deals" that is an object, not an array.');
    expect((await failure(readJsonRecords, '  \n')).message).toMatch(/^deals\.json is empty/);
  });

  it('refuses JSON cut short, after yielding the records before the cut', async () => {
    const seen: number[] = [];
    const err = await (async () => {
      for await (const item of readJsonRecords(Readable.from(['[{"dealId": "D-1"}, {"dealId": "D-']), 'deals.json')) seen.push(item.row);
    })().catch((e: unknown) => e);
    expect(seen).toEqual([1]);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toBe('deals.json ends before its JSON is complete (in record 2): the file is cut short.');
  });

  it('names the line, column and byte of a syntax error in a file', async () => {
    const file = await fileOf('broken.json', `[\n  {"dealId": "Д-1"},\n  {"dealId" "D-2"}\n]\n`);
    const err = await collect(readJsonRecords(decoded(file).text, file)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    // Byte 36: 'Д' takes two bytes in UTF-8.
    expect((err as Error).message).toBe(`${file} is not valid JSON at line 3, column 13 (byte 36): expected ':'.`);
  });

  it('counts the BOM in the byte offset of a syntax error', async () => {
    const file = await fileOf('bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[{"a": 1}, {"a": tru}]')]));
    const err = await collect(readJsonRecords(decoded(file, 'utf8-bom').text, file)).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/ at line 1, column 18 \(byte 20\): /);
  });

  it('says after which record a syntax error comes when the text is not a file', async () => {
    const err = await failure(readJsonRecords, ['[{"a": 1},', ' {"a": 2} {"a": 3}]'], 'stdin');
    expect(err.message).toBe("stdin is not valid JSON after record 1: expected ','.");
  });

  it('refuses a record larger than 16 MiB without holding more of it', async () => {
    const pieces = ['[{"dealId": "', ...Array.from({ length: 17 }, () => 'x'.repeat(1024 * 1024)), '"}]'];
    expect((await failure(readJsonRecords, pieces)).message).toBe('deals.json has a record larger than 16 MiB (record 1).');
  });

  it('reads a Windows-1251 file through the decoder', async () => {
    const file = await fileOf('deals-1251.json', iconv.encode(JSON.stringify({ deals: [deal(1)] }), 'windows-1251'));
    const items = await collect(readJsonRecords(decoded(file, 'windows-1251').text, file));
    expect(items.map((i) => i.value)).toEqual([deal(1)]);
  });

  it("passes the decoder's error on to the consumer", async () => {
    const file = await fileOf(
      'latin.json',
      Buffer.concat([Buffer.from('[{"region": "', 'latin1'), iconv.encode('Омск', 'windows-1251'), Buffer.from('"}]')]),
    );
    const err = await collect(readJsonRecords(decoded(file).text, file)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain('is not valid UTF-8 near byte 13');
  });
});

describe('readJsonLines', () => {
  it('skips blank lines, counts rows over the others and keeps reading past a broken line', async () => {
    const text = '{"dealId":"D-1"}\n\n   \n{"dealId": "D-2",\n{"dealId":"D-3"}\n42\n';
    expect(await read(readJsonLines, text, 'deals.jsonl')).toEqual([
      { row: 1, value: { dealId: 'D-1' }, raw: '{"dealId":"D-1"}' },
      { row: 2, problem: 'is not valid JSON (line 4)', raw: '{"dealId": "D-2",' },
      { row: 3, value: { dealId: 'D-3' }, raw: '{"dealId":"D-3"}' },
      { row: 4, problem: 'is not an object', raw: '42' },
    ]);
  });

  it('accepts CRLF, a BOM and a last line without a newline, whatever the chunking', async () => {
    const text = '\uFEFF{"a":"Новосибирск"}\r\n\r\n{"a":2}\r\n{"a":3}';
    const whole = await read(readJsonLines, text);
    expect(whole).toEqual([
      { row: 1, value: { a: 'Новосибирск' }, raw: '{"a":"Новосибирск"}' },
      { row: 2, value: { a: 2 }, raw: '{"a":2}' },
      { row: 3, value: { a: 3 }, raw: '{"a":3}' },
    ]);
    expect(await read(readJsonLines, text.split(''))).toEqual(whole);
  });

  it('refuses a line longer than 16 MiB', async () => {
    const pieces = ['{"a":1}\n{"a": "', ...Array.from({ length: 17 }, () => 'x'.repeat(1024 * 1024))];
    expect((await failure(readJsonLines, pieces, 'deals.jsonl')).message).toBe('deals.jsonl has a line longer than 16 MiB (line 2).');
  });

  it("passes the decoder's error on to the consumer", async () => {
    const file = await fileOf('cut.jsonl', Buffer.concat([Buffer.from('{"a":"Омск"}\n{"a":"', 'utf8'), Buffer.from([0xd0])]));
    const err = await collect(readJsonLines(decoded(file).text, file)).catch((e: unknown) => e);
    expect((err as Error).message).toContain(`${file} is not valid UTF-8 near byte 23: `);
  });
});

/** Resolves when the stream closes; fails the test, rather than hanging it, when it stays open. */
function closeOf(stream: ReadStream): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the file stream is still open')), 2000);
    stream.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('a consumer that stops early', () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  beforeAll(() => {
    process.on('warning', onWarning);
  });
  afterAll(() => {
    process.off('warning', onWarning);
  });

  it.each([
    ['readJsonRecords', readJsonRecords, (i: number) => (i === 0 ? '[' : ',') + JSON.stringify(deal(i)), ']'],
    ['readJsonLines', readJsonLines, (i: number) => `${JSON.stringify(deal(i))}\n`, ''],
  ] as const)('%s closes the file when the loop breaks', async (name, reader, line, end) => {
    const file = await fileOf(`early-${name}`, Array.from({ length: 5000 }, (_, i) => line(i)).join('') + end);
    for (const join of ['pipeline', 'pipe'] as const) {
      const source = createReadStream(file, { highWaterMark: 1024 });
      const decoder = createDecoder('utf8', file);
      const text = join === 'pipeline' ? pipeline(source, decoder, () => {}) : source.pipe(decoder);
      const closed = closeOf(source);
      let rows = 0;
      for await (const item of reader(text, file)) {
        rows = item.row;
        if (rows === 3) break;
      }
      await closed;
      expect(rows).toBe(3);
      expect(source.destroyed).toBe(true);
      expect(source.bytesRead).toBeLessThan(1024 * 1024);
    }
    expect(warnings).toEqual([]);
  });
});

describe('flattenRecord', () => {
  it('turns numbers and booleans into text, and null into an empty field', () => {
    expect(flattenRecord({ dealId: 'D-1', areaValue: 45.6, snils: 12345678964, joint: true, district: null, city: undefined })).toEqual({
      fields: { dealId: 'D-1', areaValue: '45.6', snils: '12345678964', joint: 'true', district: '', city: '' },
      problems: [],
    });
  });

  it('reports each nested object or array by its key, keeping keys as written', () => {
    expect(flattenRecord({ 'Номер сделки': 'D-1', owner: { name: 'x' }, signatures: ['a', 'b'] })).toEqual({
      fields: { 'Номер сделки': 'D-1' },
      problems: [
        { field: 'owner', message: 'must be text, not an object' },
        { field: 'signatures', message: 'must be text, not an array' },
      ],
    });
  });

  it('keeps a "__proto__" key as a field, not as a prototype', () => {
    const { fields } = flattenRecord(JSON.parse('{"__proto__": "x", "a": "1"}') as Record<string, unknown>);
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
    expect(Object.keys(fields)).toEqual(['__proto__', 'a']);
  });
});

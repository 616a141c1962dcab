import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { readJsonLines, readJsonRecords, type JsonItem } from '../../src/input/read-json.js';

type Reader = (text: NodeJS.ReadableStream, file: string) => AsyncGenerator<JsonItem>;

const NESTED = 'nested deeper than 64 levels';
const DEEP = 100_000;
const deepArray = '['.repeat(DEEP) + ']'.repeat(DEEP);
const deepObject = `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`;
/** An object of exactly `levels` levels, itself the first. */
const levels = (n: number) => `${'{"a":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`;

async function read(reader: Reader, text: string, pieceLength = text.length): Promise<JsonItem[]> {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += pieceLength) pieces.push(text.slice(i, i + pieceLength));
  const out: JsonItem[] = [];
  for await (const item of reader(Readable.from(pieces), 'deals.json')) out.push(item);
  return out;
}

const summary = (items: JsonItem[]) => items.map((i) => (i.problem ? { row: i.row, problem: i.problem } : { row: i.row, value: i.value }));

describe('a JSON record nested deeper than 64 levels', () => {
  it.each([
    ['a top-level array', (records: string) => `[${records}]`],
    ['the "deals" array of an object', (records: string) => `{"exportedAt": "2026-11-20", "deals": [${records}], "count": 4}`],
  ])('is one refused row in %s, with its text, and the records after it are read', async (_, wrap) => {
    const text = wrap(`{"dealId":"D-1"}, ${deepArray}, ${deepObject}, {"dealId":"D-4"}`);
    for (const pieceLength of [text.length, 4096]) {
      const items = await read(readJsonRecords, text, pieceLength);
      expect(summary(items)).toEqual([
        { row: 1, value: { dealId: 'D-1' } },
        { row: 2, problem: NESTED },
        { row: 3, problem: NESTED },
        { row: 4, value: { dealId: 'D-4' } },
      ]);
      expect([items[1]!.raw, items[2]!.raw]).toEqual([deepArray, deepObject]);
    }
  });

  it('keeps the text of a record too deep as it was: keys, strings, numbers, literals and empty containers', async () => {
    const inner = `[1,"x",null,true,false,{},[],{"k":"v","l":[2]},${'['.repeat(70)}-1.5e3,"y"${']'.repeat(70)},3]`;
    const record = `{"dealId":"D-1","list":[1,"\\"q\\"",{"b":[]}],"deep":{"c":${inner},"d":{}},"after":false,"n":0.25}`;
    const [item] = await read(readJsonRecords, `[${record}]`);
    expect(item).toEqual({ row: 1, problem: NESTED, raw: record });
  });

  it('reads a record of 64 levels and refuses one of 65', async () => {
    const items = await read(readJsonRecords, `[${levels(64)}, ${levels(65)}]`);
    expect(summary(items).map((i) => i.problem ?? 'read')).toEqual(['read', NESTED]);
  });

  it('stops the file on nesting 100,000 deep outside the records, where there is no row to refuse', async () => {
    const err = await read(readJsonRecords, `{"meta": ${deepArray}, "deals": []}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toBe('deals.json is nested more than 64 levels deep outside its records.');
  });
});

describe('a JSON Lines line nested deeper than 64 levels', () => {
  it('is one refused row with its text, and the lines after it are read', async () => {
    const text = `{"dealId":"D-1"}\n${deepArray}\n${deepObject}\r\n{"dealId":"D-4"}\n`;
    const items = await read(readJsonLines, text);
    expect(items).toEqual([
      { row: 1, value: { dealId: 'D-1' }, raw: '{"dealId":"D-1"}' },
      { row: 2, problem: NESTED, raw: deepArray },
      { row: 3, problem: NESTED, raw: deepObject },
      { row: 4, value: { dealId: 'D-4' }, raw: '{"dealId":"D-4"}' },
    ]);
  });

  it('reads a line of 64 levels and refuses one of 65', async () => {
    const items = await read(readJsonLines, `${levels(64)}\n${levels(65)}\n`);
    expect(summary(items).map((i) => i.problem ?? 'read')).toEqual(['read', NESTED]);
  });
});

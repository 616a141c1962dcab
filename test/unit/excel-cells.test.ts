import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { excelCell, readCell, safeCell } from '../../src/input/csv-cell.js';
import { createEncoder } from '../../src/input/decode.js';
import { parseReading, serializeReading } from '../../src/input/reading-options.js';

describe('cells written for Excel', () => {
  it('writes an id that looks like a number as ="…", and reads it back as its text', () => {
    for (const [value, id, written] of [
      ['32127602237600012345', true, '="32127602237600012345"'],
      ['1001', true, '="1001"'],
      ['77:01:0001001:1234', true, '="77:01:0001001:1234"'],
      ['D-17', true, 'D-17'],
      ['-7', true, "'-7"],
      // Not an id column: only digits Excel would change.
      ['0012', false, '="0012"'],
      ['123456789012', false, '="123456789012"'],
      ['2000', false, '2000'],
      ['56.2', false, '56.2'],
      ['=HYPERLINK("x")', false, `'=HYPERLINK("x")`],
    ] as const) {
      expect(excelCell(value, id), value).toBe(written);
      expect(readCell(written), value).toBe(value);
    }
  });

  it('lets only digits and colons into the formula: anything else is defused as before', () => {
    expect(excelCell('1+1', true)).toBe('1+1');
    expect(readCell('="1"&CHAR(10)')).toBe('="1"&CHAR(10)');
    expect(readCell('="12a"')).toBe('="12a"');
    // A bank's own `'="1"` is Excel's text marker before a formula: read as the formula's text, as before.
    expect(readCell(safeCell('="1"'))).toBe('="1"');
  });

  it('writes the rouble sign as "руб." in Windows-1251, which has no byte for it', async () => {
    const bytes = await buffer(Readable.from(['сумма 2000 ₽']).pipe(createEncoder('windows-1251')));
    expect(iconv.decode(bytes, 'windows-1251')).toBe('сумма 2000 руб.');
    const utf8 = await buffer(Readable.from(['2000 ₽']).pipe(createEncoder('utf8')));
    expect(utf8.toString('utf8')).toBe('2000 ₽');
  });

  it('keeps the sheet in the stored reading, and the form of a reading without one', () => {
    expect(serializeReading({})).toBe('{"format":null,"encoding":null,"delimiter":null,"mapping":null}');
    expect(parseReading(serializeReading({ format: 'xlsx', sheet: 'Сделки' }))).toEqual({ format: 'xlsx', sheet: 'Сделки' });
  });
});

describe('what npm test does about LibreOffice', () => {
  it('installs libreoffice-calc-nogui as root or through sudo, and otherwise says what to install', async () => {
    // @ts-expect-error: a plain .mjs script, without types
    const { libreofficePlan } = (await import('../../scripts/prepare-tests.mjs')) as {
      libreofficePlan: (facts: { exists: boolean; root: boolean; sudo: boolean; aptGet: boolean }) => {
        kind: string;
        prefix?: string[];
        sentence?: string;
      };
    };
    expect(libreofficePlan({ exists: true, root: false, sudo: false, aptGet: false })).toEqual({ kind: 'ok' });
    expect(libreofficePlan({ exists: false, root: true, sudo: false, aptGet: true })).toMatchObject({ kind: 'install', prefix: [] });
    expect(libreofficePlan({ exists: false, root: false, sudo: true, aptGet: true })).toMatchObject({
      kind: 'install',
      prefix: ['sudo', '-n'],
    });
    expect(libreofficePlan({ exists: false, root: false, sudo: false, aptGet: true }).sentence).toContain(
      'sudo apt-get install -y libreoffice-calc-nogui',
    );
    expect(libreofficePlan({ exists: false, root: true, sudo: false, aptGet: false }).kind).toBe('stop');
  });
});

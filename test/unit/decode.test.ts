import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable, Writable } from 'node:stream';
import iconv from 'iconv-lite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../src/errors.js';
import {
  createCheckedBytes,
  createDecoder,
  createEncoder,
  detectEncoding,
  parseEncodingFlag,
  type InputEncoding,
} from '../../src/input/decode.js';

const CYRILLIC = 'dealId;region;ownerSurname\nD-1;Новосибирская область;Щукина-Эйхвальд\n';
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'realty-batch-decode-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function fileOf(name: string, bytes: Buffer): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, bytes);
  return file;
}

/** Decodes `bytes` fed in chunks of `chunkSize` (default: one chunk). */
async function decode(bytes: Buffer, encoding: InputEncoding, chunkSize = bytes.length || 1): Promise<{ text: string; bytesRead: number }> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  const decoder = createDecoder(encoding, 'deals.csv');
  let text = '';
  await pipeline(Readable.from(chunks, { objectMode: false }), decoder, async (source: AsyncIterable<string>) => {
    for await (const chunk of source) {
      expect(typeof chunk).toBe('string');
      text += chunk;
    }
  });
  return { text, bytesRead: decoder.bytesRead };
}

async function decodeFile(file: string, encoding: InputEncoding): Promise<string> {
  let text = '';
  await pipeline(createReadStream(file), createDecoder(encoding, file), async (source: AsyncIterable<string>) => {
    for await (const chunk of source) text += chunk;
  });
  return text;
}

async function encode(parts: string[], encoding: InputEncoding): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(parts),
    createEncoder(encoding),
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        out.push(chunk);
        callback();
      },
    }),
  );
  return Buffer.concat(out);
}

describe('detectEncoding', () => {
  it('tells UTF-8, UTF-8 with BOM and Windows-1251 apart by their bytes', async () => {
    const utf8 = await fileOf('utf8.csv', Buffer.from(CYRILLIC, 'utf8'));
    const withBom = await fileOf('bom.csv', Buffer.concat([BOM, Buffer.from(CYRILLIC, 'utf8')]));
    const cp1251 = await fileOf('cp1251.csv', iconv.encode(CYRILLIC, 'windows-1251'));
    expect(await detectEncoding(utf8)).toBe('utf8');
    expect(await detectEncoding(withBom)).toBe('utf8-bom');
    expect(await detectEncoding(cp1251)).toBe('windows-1251');
  });

  it('calls an empty file UTF-8', async () => {
    expect(await detectEncoding(await fileOf('empty.csv', Buffer.alloc(0)))).toBe('utf8');
  });

  it('accepts a character cut by the 64 KiB sample end, but not one cut by the end of a small file', async () => {
    const cutAtSample = Buffer.concat([Buffer.alloc(64 * 1024 - 1, 0x61), Buffer.from('Ж', 'utf8')]);
    expect(await detectEncoding(await fileOf('cut.csv', cutAtSample))).toBe('utf8');
    // 0xD0 is 'Р' in Windows-1251 and a UTF-8 lead byte: a small file ending with it is not UTF-8.
    expect(await detectEncoding(await fileOf('short.csv', Buffer.from([0x61, 0x3b, 0xd0])))).toBe('windows-1251');
  });

  it('refuses overlong and surrogate encodings as UTF-8', async () => {
    expect(await detectEncoding(await fileOf('overlong.csv', Buffer.from([0x61, 0xc0, 0xaf, 0x0a])))).toBe('windows-1251');
    expect(await detectEncoding(await fileOf('surrogate.csv', Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x0a])))).toBe('windows-1251');
  });

  it('refuses a UTF-16 file instead of guessing Windows-1251', async () => {
    const file = await fileOf('utf16.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('dealId', 'utf16le')]));
    await expect(detectEncoding(file)).rejects.toThrow(/UTF-16/);
  });

  it('names the file and the errno code when the file cannot be opened', async () => {
    const missing = join(dir, 'missing.csv');
    const err = await detectEncoding(missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toContain(missing);
    expect((err as InputError).message).toContain('ENOENT');
  });
});

describe('createDecoder', () => {
  it('decodes Windows-1251 Cyrillic and counts the bytes consumed', async () => {
    const bytes = iconv.encode(CYRILLIC, 'windows-1251');
    expect(await decode(bytes, 'windows-1251', 7)).toEqual({ text: CYRILLIC, bytesRead: bytes.length });
  });

  it('decodes UTF-8 whose characters are split across chunks', async () => {
    const bytes = Buffer.from(`${CYRILLIC}😀`, 'utf8');
    expect(await decode(bytes, 'utf8', 1)).toEqual({ text: `${CYRILLIC}😀`, bytesRead: bytes.length });
    expect((await decode(bytes, 'utf8', 5)).text).toBe(`${CYRILLIC}😀`);
  });

  it('drops the BOM for utf8-bom, and a leading BOM for utf8 too', async () => {
    const bytes = Buffer.concat([BOM, Buffer.from(CYRILLIC, 'utf8')]);
    expect((await decode(bytes, 'utf8-bom')).text).toBe(CYRILLIC);
    expect((await decode(bytes, 'utf8')).text).toBe(CYRILLIC);
    expect((await decode(bytes, 'utf8-bom', 1)).text).toBe(CYRILLIC);
  });

  it('stops with the byte offset when Windows-1251 Cyrillic follows 64 KiB of ASCII, never writing mojibake', async () => {
    const ascii = `dealId;region\n${'D-0;x\n'.repeat(12_000)}`;
    expect(ascii.length).toBeGreaterThan(64 * 1024);
    const file = await fileOf(
      'late-cyrillic.csv',
      Buffer.concat([Buffer.from(ascii, 'latin1'), iconv.encode('D-1;Новосибирская область\n', 'windows-1251')]),
    );
    expect(await detectEncoding(file)).toBe('utf8');

    const seen: string[] = [];
    const err = await pipeline(createReadStream(file), createDecoder('utf8', file), async (source: AsyncIterable<string>) => {
      for await (const chunk of source) seen.push(chunk);
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    const offset = ascii.length + 'D-1;'.length;
    expect((err as InputError).message).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid UTF-8 near byte ${offset}: .*--encoding windows-1251`),
    );
    expect(seen.join('')).not.toMatch(/[\uFFFD\u0400-\u04FF]/);
  });

  it('reports an invalid sequence that straddles two chunks at its first byte', async () => {
    // 'Ж' then a lead byte whose continuation is ASCII: invalid at offset 2, fed one byte at a time.
    const err = await decode(Buffer.from([0xd0, 0x96, 0xd0, 0x41, 0x42]), 'utf8', 1).catch((e: unknown) => e);
    expect((err as Error).message).toContain('near byte 2:');
  });

  it('treats a UTF-8 character cut short at the end of the file as an error', async () => {
    const bytes = Buffer.concat([Buffer.from('D-1;Нов', 'utf8'), Buffer.from('о', 'utf8').subarray(0, 1)]);
    const err = await decode(bytes, 'utf8', 3).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toContain(`near byte ${bytes.length - 1}:`);
  });

  it('decodes a whole file of each encoding through fs streams', async () => {
    const cp1251 = await fileOf('whole-1251.csv', iconv.encode(CYRILLIC.repeat(3000), 'windows-1251'));
    const utf8 = await fileOf('whole-utf8.csv', Buffer.from(CYRILLIC.repeat(3000), 'utf8'));
    expect(await decodeFile(cp1251, 'windows-1251')).toBe(CYRILLIC.repeat(3000));
    expect(await decodeFile(utf8, 'utf8')).toBe(CYRILLIC.repeat(3000));
  });
});

/** `bytes` through `createCheckedBytes` in chunks of `chunkSize`: what came out, and the error if any. */
async function checkBytes(bytes: Buffer, chunkSize: number): Promise<{ out: Buffer; bytesRead: number; err?: unknown }> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  const checker = createCheckedBytes('utf8', 'deals.csv');
  const out: Buffer[] = [];
  const err = await pipeline(Readable.from(chunks, { objectMode: false }), checker, async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      expect(Buffer.isBuffer(chunk)).toBe(true);
      // Every chunk ends on a whole character: it decodes on its own.
      expect(() => new TextDecoder('utf-8', { fatal: true }).decode(chunk)).not.toThrow();
      out.push(chunk);
    }
  }).catch((e: unknown) => e);
  return { out: Buffer.concat(out), bytesRead: checker.bytesRead, ...(err !== undefined && { err }) };
}

describe('createCheckedBytes', () => {
  const valid = Buffer.from(`${CYRILLIC}😀`, 'utf8');
  const broken: Array<[string, Buffer]> = [
    ['a sequence that straddles two chunks', Buffer.from([0xd0, 0x96, 0xd0, 0x41, 0x42])],
    ['a character cut short at the end', Buffer.concat([Buffer.from('D-1;Нов', 'utf8'), Buffer.from('о', 'utf8').subarray(0, 1)])],
    [
      'a Windows-1251 byte after ASCII',
      Buffer.concat([Buffer.from('D-0;x\n'.repeat(50), 'latin1'), iconv.encode('D-1;Новосибирская', 'windows-1251')]),
    ],
    ['a surrogate', Buffer.concat([Buffer.from('D-1;', 'utf8'), Buffer.from([0xed, 0xa0, 0x80])])],
    ['an overlong', Buffer.concat([BOM, Buffer.from('D-1;', 'utf8'), Buffer.from([0xc0, 0xaf])])],
    ['a BOM cut short', BOM.subarray(0, 2)],
  ];

  it('passes UTF-8 on byte for byte, whatever the chunks, a leading BOM dropped', async () => {
    for (const size of [1, 2, 5, 64]) {
      expect(await checkBytes(valid, size)).toEqual({ out: valid, bytesRead: valid.length });
      const withBom = Buffer.concat([BOM, valid]);
      expect(await checkBytes(withBom, size)).toEqual({ out: valid, bytesRead: withBom.length });
    }
  });

  it('refuses what createDecoder refuses, with the same message and byte offset', async () => {
    for (const [, bytes] of broken) {
      for (const size of [1, 3, bytes.length]) {
        const decoded = await decode(bytes, 'utf8', size).catch((e: unknown) => e);
        const { err } = await checkBytes(bytes, size);
        expect(err).toBeInstanceOf(InputError);
        expect((err as Error).message).toBe((decoded as Error).message);
      }
    }
  });

  it('decodes Windows-1251 into text, as createDecoder does', async () => {
    const bytes = iconv.encode(CYRILLIC, 'windows-1251');
    let text = '';
    await pipeline(Readable.from([bytes]), createCheckedBytes('windows-1251', 'deals.csv'), async (source: AsyncIterable<string>) => {
      for await (const chunk of source) text += chunk;
    });
    expect(text).toBe(CYRILLIC);
  });
});

describe('createEncoder', () => {
  it('round-trips Windows-1251 Cyrillic, writing ? for what 1251 cannot hold', async () => {
    const bytes = await encode(['Иванов;', 'Новосибирск\n'], 'windows-1251');
    expect(bytes).toEqual(iconv.encode('Иванов;Новосибирск\n', 'windows-1251'));
    expect((await decode(bytes, 'windows-1251')).text).toBe('Иванов;Новосибирск\n');
    expect((await encode(['a中b'], 'windows-1251')).toString('latin1')).toBe('a?b');
  });

  it('writes the BOM first for utf8-bom, even when nothing else is written', async () => {
    expect(await encode(['Иванов\n', 'x'], 'utf8-bom')).toEqual(Buffer.concat([BOM, Buffer.from('Иванов\nx', 'utf8')]));
    expect(await encode([], 'utf8-bom')).toEqual(BOM);
    expect(await encode(['Иванов'], 'utf8')).toEqual(Buffer.from('Иванов', 'utf8'));
  });
});

describe('parseEncodingFlag', () => {
  it('accepts every alias in any case', () => {
    expect(parseEncodingFlag('auto')).toBe('auto');
    expect(parseEncodingFlag('UTF8')).toBe('utf8');
    expect(parseEncodingFlag('utf-8')).toBe('utf8');
    expect(parseEncodingFlag('utf8-bom')).toBe('utf8-bom');
    expect(parseEncodingFlag('UTF-8-BOM')).toBe('utf8-bom');
    expect(parseEncodingFlag('windows-1251')).toBe('windows-1251');
    expect(parseEncodingFlag('CP1251')).toBe('windows-1251');
    expect(parseEncodingFlag('win1251')).toBe('windows-1251');
  });

  it('refuses latin1 with a usage error (exit 2) listing the accepted values', () => {
    const err = (() => {
      try {
        return parseEncodingFlag('latin1');
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(2);
    expect((err as UsageError).message).toMatch(/latin1.*auto.*utf8.*utf8-bom.*windows-1251/);
  });
});

/**
 * The guard in front of csv-parse: lines through as they are, however the chunks cut them;
 * a line over its bounds replaced by one marker in its place, the lines after it untouched.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CsvLineGuard, GUARD_CELLS, MAX_LINE_BYTES, oversizedMarker, oversizedOf } from '../../src/input/csv-line-guard.js';

/** The text cut into chunks of the given sizes (the last takes the rest), as Buffers or strings. */
function chunksOf(text: string, sizes: number[], kind: 'bytes' | 'text'): Array<Buffer | string> {
  const whole = Buffer.from(text, 'latin1');
  const out: Array<Buffer | string> = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= whole.length) break;
    out.push(whole.subarray(at, at + size));
    at += size;
  }
  if (at < whole.length) out.push(whole.subarray(at));
  return kind === 'bytes' ? out : out.map((b) => (b as Buffer).toString('latin1'));
}

async function guarded(chunks: Array<Buffer | string>, delimiter = ','): Promise<{ text: string; dropped: number }> {
  const guard = new CsvLineGuard(delimiter);
  let text = '';
  Readable.from(chunks, { objectMode: true }).pipe(guard);
  for await (const part of guard as AsyncIterable<Buffer | string>) text += typeof part === 'string' ? part : part.toString('latin1');
  return { text, dropped: guard.dropped() };
}

/** A deterministic sequence of chunk sizes, 1 to 97 bytes. */
const SIZES = Array.from({ length: 400 }, (_, i) => ((i * 37) % 97) + 1);

describe('CsvLineGuard', () => {
  const text = 'dealId,house\r\nA-1,14\nA-2,"15\r\n16"\rA-3,17\r\n\r\nA-4,18';

  it.each(['bytes', 'text'] as const)('passes every line through unchanged, however the chunks cut them (%s)', async (kind) => {
    for (const sizes of [[1], [2], [3], [5], SIZES, [text.length]]) {
      expect(await guarded(chunksOf(text, sizes.length === 1 ? Array(100).fill(sizes[0]) : sizes, kind))).toEqual({ text, dropped: 0 });
    }
  });

  it.each(['bytes', 'text'] as const)(
    'replaces a line longer than 4 MiB by one marker and keeps the lines around it (%s)',
    async (kind) => {
      const long = 'x'.repeat(MAX_LINE_BYTES + 1);
      const input = `h1,h2\r\na,b\r\n${long}\r\nc,d\n`;
      const out = await guarded(chunksOf(input, Array(200).fill(64 * 1024), kind));
      expect(out.dropped).toBe(1);
      expect(out.text).toBe(`h1,h2\r\na,b\r\n${oversizedMarker({ bytes: long.length, cells: 1 })}\r\nc,d\n`);
      expect(oversizedOf(out.text)?.line).toEqual({ bytes: MAX_LINE_BYTES + 1, cells: 1 });
    },
  );

  it('replaces a line of more delimiters than it lets through, counting every one, even as the last line', async () => {
    const commas = ';'.repeat(GUARD_CELLS * 3);
    const out = await guarded(chunksOf(`a;b\n${commas}`, Array(10).fill(64 * 1024), 'bytes'), ';');
    expect(out).toEqual({ text: `a;b\n${oversizedMarker({ bytes: commas.length, cells: commas.length + 1 })}`, dropped: 1 });
  });

  it('lets a line of 64 KiB of delimiters or less through whole: the reader bounds its cells', async () => {
    const wide = `${','.repeat(GUARD_CELLS - 1)}`;
    const out = await guarded(chunksOf(`a,b\n${wide}\nc,d\n`, Array(10).fill(1000), 'bytes'));
    expect(out).toEqual({ text: `a,b\n${wide}\nc,d\n`, dropped: 0 });
  });

  it('reads back each marker in a cell that holds several', () => {
    const cell = `x${oversizedMarker({ bytes: 5, cells: 2 })}y${oversizedMarker({ bytes: 7, cells: 3 })}`;
    const first = oversizedOf(cell)!;
    expect(first.line).toEqual({ bytes: 5, cells: 2 });
    expect(oversizedOf(cell, first.next)!.line).toEqual({ bytes: 7, cells: 3 });
    expect(oversizedOf('an ordinary cell')).toBeUndefined();
  });
});

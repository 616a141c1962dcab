/**
 * A CSV's lines, bounded before csv-parse sees them. csv-parse bounds the characters of a
 * record's cells (`max_record_size`), not how many cells it has: a line of 188 million
 * commas is 188 million empty cells, an array V8 cannot grow, and the process aborts
 * (SIGTRAP, exit 133) with no error to catch; the reading thread takes the whole process
 * with it, and an inbox restarted it into the same file every time. So this stream holds
 * each line until its end is seen (`\n`, `\r`) and lets through only lines of at most
 * MAX_LINE_BYTES bytes and GUARD_CELLS delimiters; a longer one is dropped whole, and in its
 * place comes one line csv-parse reads as one cell, a marker (`oversizedOf` reads it) that
 * the reader turns into one refused row: the rows after it are read as they are.
 *
 * Cheap on the common path: a chunk is searched for its last line end (memchr), the lines
 * inside it pass as one slice, and only a line that outgrows 64 KiB (chunks are 64 KiB, so
 * only a line carried across several) has its delimiters counted.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** The bytes of a line (its cells, delimiters and quotes), as csv-parse bounds a record's characters. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
/**
 * Delimiters a line may hold before it is dropped here: what csv-parse can take at no cost
 * (a line of one chunk holds at most this many). The reader's own bound on a row's cells
 * (MAX_ROW_CELLS, open-input.ts) is lower and exact; this one only keeps memory bounded.
 */
export const GUARD_CELLS = 64 * 1024;

const MARK = '\u0000realty-batch:oversized:';
const END = '\u0000';
const LF = 0x0a;
const CR = 0x0d;

/** A line the guard dropped: how long it was, and how many cells it had (its delimiters plus one). */
export interface OversizedLine {
  bytes: number;
  cells: number;
}

type Chunk = Buffer | string;

/** The last line end of a chunk (`\n` or `\r`), or -1. */
function lastLineEnd(chunk: Chunk): number {
  return typeof chunk === 'string'
    ? Math.max(chunk.lastIndexOf('\n'), chunk.lastIndexOf('\r'))
    : Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
}

/** The first line end of a chunk at or after `from`, or -1. */
function firstLineEnd(chunk: Chunk, from = 0): number {
  const lf = typeof chunk === 'string' ? chunk.indexOf('\n', from) : chunk.indexOf(LF, from);
  const cr = typeof chunk === 'string' ? chunk.indexOf('\r', from) : chunk.indexOf(CR, from);
  return lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
}

/**
 * How many times `delimiter` occurs in `chunk` between `from` and `to`: a plain loop, which
 * takes about a millisecond a megabyte whatever the delimiters' density (an indexOf a
 * delimiter took seconds over a line of commas).
 */
function countOf(chunk: Chunk, delimiter: string, from: number, to: number): number {
  let n = 0;
  const code = delimiter.charCodeAt(0);
  if (typeof chunk === 'string') {
    for (let i = from; i < to; i++) if (chunk.charCodeAt(i) === code) n++;
  } else {
    for (let i = from; i < to; i++) if (chunk[i] === code) n++;
  }
  return n;
}

/** Part `from`..`to` of a chunk, without a copy. */
const partOf = (chunk: Chunk, from: number, to: number): Chunk =>
  from === 0 && to === chunk.length ? chunk : typeof chunk === 'string' ? chunk.slice(from, to) : chunk.subarray(from, to);

/** The marker a dropped line becomes: one cell, no delimiter, quote or line end in it. */
export function oversizedMarker(line: OversizedLine): string {
  return `${MARK}${line.bytes}:${line.cells}${END}`;
}

/**
 * The first marker in `cell` at or after `from`: the line it stands for, and where to look
 * for the next; undefined when there is none.
 */
export function oversizedOf(cell: string, from = 0): { line: OversizedLine; next: number } | undefined {
  const at = cell.indexOf(MARK, from);
  if (at === -1) return undefined;
  const end = cell.indexOf(END, at + MARK.length);
  const [bytes, cells] = cell.slice(at + MARK.length, end).split(':');
  return { line: { bytes: Number(bytes), cells: Number(cells) }, next: end + 1 };
}

/**
 * The guard: bytes (UTF-8 checked, decode.ts) or strings (Windows-1251 decoded: one byte is
 * one character) in, the same out. `dropped()` counts the lines it replaced, so that the reader
 * looks for a marker only once there is one.
 */
export class CsvLineGuard extends Transform {
  readonly #delimiter: string;
  /** The line not ended yet: its parts, their length and (once it is long) its delimiters. */
  #parts: Chunk[] = [];
  #length = 0;
  #delimiters = 0;
  /** The current line was too long or too wide: the rest of it is dropped up to its end. */
  #dropping = false;
  #dropped = 0;

  constructor(delimiter: string) {
    super({ readableObjectMode: true, writableObjectMode: true });
    this.#delimiter = delimiter;
  }

  /** Lines replaced by a marker so far. */
  dropped(): number {
    return this.#dropped;
  }

  override _transform(chunk: Chunk, _encoding: BufferEncoding, callback: TransformCallback): void {
    let from = 0;
    const last = lastLineEnd(chunk);
    if (this.#length > 0 || this.#dropping) {
      // The line carried from the chunks before ends at this chunk's first line end (or goes on past it).
      const end = last === -1 ? chunk.length : firstLineEnd(chunk);
      this.#grow(chunk, 0, end);
      if (last === -1) {
        callback();
        return;
      }
      this.#endLine();
      from = end;
    }
    if (last === -1) {
      this.#grow(chunk, 0, chunk.length);
    } else {
      // Every line from `from` to the last line end is shorter than the chunk: through as one slice.
      if (last >= from) this.push(partOf(chunk, from, last + 1));
      if (last + 1 < chunk.length) this.#grow(chunk, last + 1, chunk.length);
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    // A last line with no line end after it.
    if (this.#length > 0 || this.#dropping) this.#endLine();
    callback();
  }

  /** Part `from`..`to` of a chunk added to the line not ended yet. */
  #grow(chunk: Chunk, from: number, to: number): void {
    if (to <= from) return;
    const wasLong = this.#length > GUARD_CELLS;
    this.#length += to - from;
    if (this.#dropping) {
      this.#delimiters += countOf(chunk, this.#delimiter, from, to);
      return;
    }
    this.#parts.push(partOf(chunk, from, to));
    if (this.#length <= GUARD_CELLS) return;
    // Only now can the line hold more delimiters than GUARD_CELLS: those held so far are counted once.
    this.#delimiters += wasLong
      ? countOf(chunk, this.#delimiter, from, to)
      : this.#parts.reduce((n, part) => n + countOf(part, this.#delimiter, 0, part.length), 0);
    if (this.#length > MAX_LINE_BYTES || this.#delimiters >= GUARD_CELLS) {
      this.#dropping = true;
      this.#parts = [];
    }
  }

  /** The line not ended yet has ended (its line end is the next byte, or the input ended). */
  #endLine(): void {
    if (this.#dropping) {
      this.push(oversizedMarker({ bytes: this.#length, cells: this.#delimiters + 1 }));
      this.#dropped++;
    } else {
      for (const part of this.#parts) this.push(part);
    }
    this.#parts = [];
    this.#length = 0;
    this.#delimiters = 0;
    this.#dropping = false;
  }
}

/**
 * The dealIds a file has shown so far, each with the row it first appeared on and
 * a hash of that row's property (its cadastral number and its address, see
 * property-key.ts), in 20 bytes an id instead of the ~90 of a Map entry: a
 * million-row file keeps 40 MB here rather than 90 MB, and the loader's heap stops
 * growing with it.
 *
 * An id is kept as two independent 32-bit hashes. Two different ids are taken
 * for one only when both hashes collide: for a million ids, a chance of about
 * 3 in 100 million per file, and the row would then be refused visibly
 * ("repeats the dealId of row N"), never sent twice or lost. Two properties
 * taken for one by their 32-bit hashes change only which hint the refused row gets.
 */
import { compareProperties, type PropertyKey } from './property-key.js';

export class SeenIds {
  private capacity = 1 << 16;
  private size = 0;
  private h1 = new Uint32Array(this.capacity);
  private h2 = new Uint32Array(this.capacity);
  /** 0 = empty slot; rows are 1-based. */
  private rows = new Int32Array(this.capacity);
  /** The first row's property: its cadastral number's hash (0: none) and its address's. */
  private cn = new Uint32Array(this.capacity);
  private addr = new Uint32Array(this.capacity);

  /** The row where `id` was first seen; records it at `row` and returns undefined the first time. */
  firstRow(id: string, row: number): number | undefined {
    return this.first(id, row)?.row;
  }

  /**
   * The first row of `id` and how its property compares with `property` (compareProperties:
   * `same`, `different` or `unknown`); records both at `row` and returns undefined the first time.
   */
  first(id: string, row: number, property: PropertyKey = {}): { row: number; property: 'same' | 'different' | 'unknown' } | undefined {
    const [a, b] = hashes(id);
    const mask = this.capacity - 1;
    for (let i = a & mask; ; i = (i + 1) & mask) {
      if (this.rows[i] === 0) {
        this.h1[i] = a;
        this.h2[i] = b;
        this.rows[i] = row;
        this.cn[i] = hashOf(property.cadastralNumber);
        this.addr[i] = hashOf(property.address);
        if (++this.size * 2 > this.capacity) this.grow();
        return undefined;
      }
      if (this.h1[i] === a && this.h2[i] === b) {
        const hashed = (cn: number, addr: number) => ({ ...(cn !== 0 && { cadastralNumber: cn }), ...(addr !== 0 && { address: addr }) });
        const earlier = hashed(this.cn[i]!, this.addr[i]!);
        const now = hashed(hashOf(property.cadastralNumber), hashOf(property.address));
        return { row: this.rows[i]!, property: compareProperties(earlier, now) };
      }
    }
  }

  private grow(): void {
    const { h1, h2, rows, cn, addr } = this;
    this.capacity *= 2;
    this.h1 = new Uint32Array(this.capacity);
    this.h2 = new Uint32Array(this.capacity);
    this.rows = new Int32Array(this.capacity);
    this.cn = new Uint32Array(this.capacity);
    this.addr = new Uint32Array(this.capacity);
    const mask = this.capacity - 1;
    for (let j = 0; j < rows.length; j++) {
      if (rows[j] === 0) continue;
      let i = h1[j]! & mask;
      while (this.rows[i] !== 0) i = (i + 1) & mask;
      this.h1[i] = h1[j]!;
      this.h2[i] = h2[j]!;
      this.rows[i] = rows[j]!;
      this.cn[i] = cn[j]!;
      this.addr[i] = addr[j]!;
    }
  }
}

/** A text's 32-bit hash, never 0 (0 stands for no text). */
function hashOf(text: string | undefined): number {
  if (text === undefined || text === '') return 0;
  return hashes(text)[0] || 1;
}

/** Two 32-bit hashes of a string (the two halves of cyrb53's state, after its final mixing). */
function hashes(s: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}

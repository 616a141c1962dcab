/**
 * The dealIds a file has shown so far, each with the row it first appeared on and
 * a hash of that row's property (its cadastral number and its address, see
 * property-key.ts): 20 bytes an entry and 4 a slot of a table at most half full, the
 * entries grown by half when full. A million-row file keeps 34 MB here (a Map would take
 * about 90), outside the JS heap.
 *
 * An id is kept as two independent 32-bit hashes. Two different ids are taken
 * for one only when both hashes collide: for a million ids, a chance of about
 * 3 in 100 million per file, and the row would then be refused visibly
 * ("repeats the dealId of row N"), never sent twice or lost. Two properties
 * taken for one by their 32-bit hashes change only which hint the refused row gets.
 */
import { compareProperties, type PropertyKey } from './property-key.js';

export class SeenIds {
  /** Open addressing over entry numbers (entry + 1; 0 = empty slot), at most half full: 4 bytes a slot. */
  private slots = new Int32Array(1 << 16);
  private size = 0;
  /**
   * The entries, dense, in the order first seen, grown by half when full: 20 bytes an id and
   * no empty ones, where keeping them in the slots took 40 bytes an id at a table half full
   * (40 MB for a million ids; 25 + 8 MB so).
   */
  private h1 = new Uint32Array(1 << 15);
  private h2 = new Uint32Array(1 << 15);
  /** Rows are 1-based. */
  private rows = new Int32Array(1 << 15);
  /** The first row's property: its cadastral number's hash (0: none) and its address's. */
  private cn = new Uint32Array(1 << 15);
  private addr = new Uint32Array(1 << 15);

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
    const mask = this.slots.length - 1;
    for (let i = a & mask; ; i = (i + 1) & mask) {
      const slot = this.slots[i]!;
      if (slot === 0) {
        this.add(i, a, b, row, property);
        return undefined;
      }
      const e = slot - 1;
      if (this.h1[e] === a && this.h2[e] === b) {
        const hashed = (cn: number, addr: number) => ({ ...(cn !== 0 && { cadastralNumber: cn }), ...(addr !== 0 && { address: addr }) });
        const earlier = hashed(this.cn[e]!, this.addr[e]!);
        const now = hashed(hashOf(property.cadastralNumber), hashOf(property.address));
        return { row: this.rows[e]!, property: compareProperties(earlier, now) };
      }
    }
  }

  private add(slot: number, a: number, b: number, row: number, property: PropertyKey): void {
    const e = this.size;
    if (e === this.rows.length) this.growEntries();
    this.h1[e] = a;
    this.h2[e] = b;
    this.rows[e] = row;
    this.cn[e] = hashOf(property.cadastralNumber);
    this.addr[e] = hashOf(property.address);
    this.slots[slot] = e + 1;
    if (++this.size * 2 > this.slots.length) this.growSlots();
  }

  private growEntries(): void {
    const capacity = Math.ceil(this.rows.length * 1.5);
    const grown = <T extends Uint32Array | Int32Array>(from: T, to: T): T => {
      to.set(from);
      return to;
    };
    this.h1 = grown(this.h1, new Uint32Array(capacity));
    this.h2 = grown(this.h2, new Uint32Array(capacity));
    this.rows = grown(this.rows, new Int32Array(capacity));
    this.cn = grown(this.cn, new Uint32Array(capacity));
    this.addr = grown(this.addr, new Uint32Array(capacity));
  }

  private growSlots(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let e = 0; e < this.size; e++) {
      let i = this.h1[e]! & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = e + 1;
    }
    this.slots = slots;
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

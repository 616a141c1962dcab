/**
 * The dealIds a file has shown so far, each with the row it first appeared on and
 * a hash of that row's property (its cadastral number and its address, see
 * property-key.ts): 20 bytes an entry, in blocks of 32,768 entries that are never copied,
 * and 4 bytes a slot of a table at most half full. A million-row file keeps 29 MB here
 * (a Map would take about 90), outside the JS heap.
 *
 * An id is kept as two independent 32-bit hashes. Two different ids are taken
 * for one only when both hashes collide: for a million ids, a chance of about
 * 3 in 100 million per file, and the row would then be refused visibly
 * ("repeats the dealId of row N"), never sent twice or lost. Two properties
 * taken for one by their 32-bit hashes change only which hint the refused row gets.
 */
import { compareProperties, type PropertyKey } from './property-key.js';

/** Entries a block: 640 KiB. */
const BLOCK_BITS = 15;
const BLOCK = 1 << BLOCK_BITS;
/** An entry's five numbers, side by side in its block: its id's two hashes, its row (1-based), its property's two hashes. */
const H1 = 0;
const H2 = 1;
const ROW = 2;
const CN = 3;
const ADDR = 4;
const WIDTH = 5;
/** Where entry e's numbers begin in its block (`blocks[e >>> BLOCK_BITS]`). */
const offsetOf = (e: number): number => (e & (BLOCK - 1)) * WIDTH;

export class SeenIds {
  /** Open addressing over entry numbers (entry + 1; 0 = empty slot), at most half full: 4 bytes a slot. */
  private slots = new Int32Array(1 << 16);
  private size = 0;
  /**
   * The entries, dense, in the order first seen, a block added when the last is full. Grown by
   * half and copied, as they were, a million ids took 25 MB, and 42 while the last copy was
   * made (the old arrays beside the new); in blocks, 21 MB at most.
   */
  private readonly blocks: Uint32Array[] = [];

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
      const block = this.blocks[e >>> BLOCK_BITS]!;
      const at = offsetOf(e);
      if (block[at + H1] === a && block[at + H2] === b) {
        const hashed = (cn: number, addr: number) => ({ ...(cn !== 0 && { cadastralNumber: cn }), ...(addr !== 0 && { address: addr }) });
        const earlier = hashed(block[at + CN]!, block[at + ADDR]!);
        const now = hashed(hashOf(property.cadastralNumber), hashOf(property.address));
        return { row: block[at + ROW]!, property: compareProperties(earlier, now) };
      }
    }
  }

  private add(slot: number, a: number, b: number, row: number, property: PropertyKey): void {
    const e = this.size;
    if ((e & (BLOCK - 1)) === 0) this.blocks.push(new Uint32Array(BLOCK * WIDTH));
    const block = this.blocks[e >>> BLOCK_BITS]!;
    const at = offsetOf(e);
    block[at + H1] = a;
    block[at + H2] = b;
    block[at + ROW] = row;
    block[at + CN] = hashOf(property.cadastralNumber);
    block[at + ADDR] = hashOf(property.address);
    this.slots[slot] = e + 1;
    if (++this.size * 2 > this.slots.length) this.growSlots();
  }

  private growSlots(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let e = 0; e < this.size; e++) {
      let i = this.blocks[e >>> BLOCK_BITS]![offsetOf(e) + H1]! & mask;
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

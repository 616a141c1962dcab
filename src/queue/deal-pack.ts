/**
 * A deal as a waiting job keeps it in Redis: positional JSON. A deal's key names
 * (`"issuerName":`, `"apartmentType":` ...) were about 400 of its 900 to 1,000 bytes, and
 * BullMQ stores every waiting job's data as one string: a night of 200,000 rows paid about
 * 80 MB for key names alone. An object is written as an array: first a number whose bit i
 * says that KEYS[i] is present, then those keys' values in KEYS' order, then, only when
 * there are any, the keys KEYS does not know, as an object (so a deal with a field added
 * later still travels whole). A real array stays an array; one that could be read as an
 * object (its first item a number, or the escape) gets the escape in front. The deal's
 * dealId is the job's own (its id, `dealJobId`) and is not written twice. Its Cyrillic texts
 * are written one byte a letter (`compactText`): the job's data is paid per waiting row.
 */
import type { Deal } from '../domain/deal.js';

/**
 * Every key a deal held (src/domain/deal.ts, and the types' own parts, src/docflows/<type>/), at
 * every depth, when it was listed here. Append only: a key's place is its bit in jobs already
 * waiting in Redis, which a new version must read as written. A key not listed travels by name.
 */
const KEYS = [
  'dealId',
  'objectType',
  'cadastralNumber',
  'region',
  'district',
  'city',
  'settlement',
  'street',
  'streetType',
  'house',
  'building',
  'structure',
  'apartment',
  'apartmentType',
  'areaValue',
  'areaUnit',
  'owners',
  'agreement',
  'surname',
  'name',
  'patronymic',
  'birthDate',
  'birthPlace',
  'snils',
  'gender',
  'citizenship',
  'doc',
  'address',
  'type',
  'series',
  'number',
  'issueDate',
  'issuerCode',
  'issuerName',
  'kind',
  'fiasId',
  'contentId',
  'signatureIds',
  'fileType',
  'file',
  'signatureFiles',
  'path',
  'contentType',
  'size',
  'sha256',
  'settlementType',
  'inode',
  'lift',
  'documents',
  'changedAtMs',
] as const;

const PLACE: ReadonlyMap<string, number> = new Map(KEYS.map((key, i) => [key, i]));
/** In front of a real array whose first item would read as an object's key bits. */
const ESCAPE = '#';

/** A deal as `DealJobData.c` holds it (see above). */
export type PackedDeal = unknown[];

/**
 * Texts in `c` (not in `d`): a Cyrillic letter is two bytes in UTF-8, and a row's names, addresses
 * and issuers hold about 180 of them (360 of a packed deal's 800 bytes in the bench's rows). A text
 * with more of them than it has ASCII letters is written with one byte a letter: MARK in front,
 * А–Я and а–я (U+0410–U+044F) as LETTERS' characters in their order, and a character of LETTERS
 * or MARK that stands for itself after a MARK. Every other character (digits, spaces,
 * punctuation, Ё, №) is itself. A text that starts with MARK is always written so, and read back
 * as it was. LETTERS, like KEYS, never changes: jobs waiting in Redis were written with it.
 */
const MARK = 96; // '`'
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ!$%&*+abcdefghijklmnopqrstuvwxyz;<=>?@';
const FIRST_LETTER = 0x410;
const AFTER_LETTERS = FIRST_LETTER + LETTERS.length;
/** LETTERS' character codes, by letter (U+0410 first). */
const CODES = Uint16Array.from(LETTERS, (ch) => ch.charCodeAt(0));
/** Per ASCII code: the Cyrillic letter it stands for, -1 for MARK, 0 for itself. */
const ASCII = new Int32Array(128);
for (let i = 0; i < LETTERS.length; i++) ASCII[CODES[i]!] = FIRST_LETTER + i;
ASCII[MARK] = -1;
const CYRILLIC = /[\u0410-\u044f]/;

/**
 * Where compactText and fullText build a text: bytes Node decodes in one call, twice as fast as
 * a string of char codes (150 → 90 ns a text; the loader packs about 40 texts a row).
 */
let scratch = Buffer.allocUnsafe(4096);
const room = (bytes: number): Buffer => (scratch.length >= bytes ? scratch : (scratch = Buffer.allocUnsafe(bytes)));

/** `text` as `c` keeps it (see LETTERS): compact when that saves bytes, else as it is. */
export function compactText(text: string): string {
  const n = text.length;
  const marked = text.charCodeAt(0) === MARK;
  if (!marked && !CYRILLIC.test(text)) return text;
  // Most texts are Cyrillic letters and ASCII: one byte a character, read as latin1.
  const out = room(2 * n + 1);
  let k = 0;
  let letters = 0;
  out[k++] = MARK;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= FIRST_LETTER && c < AFTER_LETTERS) {
      out[k++] = CODES[c - FIRST_LETTER]!;
      letters++;
    } else if (c < 128) {
      if (ASCII[c] !== 0) out[k++] = MARK;
      out[k++] = c;
    } else return compactWide(text);
  }
  // Each letter saves a byte; the mark and each escaped character cost one (k - n of them).
  return letters > k - n || marked ? out.toString('latin1', 0, k) : text;
}

/** compactText of a text with other characters above ASCII (Ё, №, «): two bytes a character, read as UTF-16. */
function compactWide(text: string): string {
  const n = text.length;
  const out = room(2 * (2 * n + 1));
  let k = 0;
  let letters = 0;
  const put = (code: number): void => {
    out[2 * k] = code & 0xff;
    out[2 * k + 1] = code >>> 8;
    k++;
  };
  put(MARK);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= FIRST_LETTER && c < AFTER_LETTERS) {
      put(CODES[c - FIRST_LETTER]!);
      letters++;
    } else {
      if (c < 128 && ASCII[c] !== 0) put(MARK);
      put(c);
    }
  }
  return letters > k - n || text.charCodeAt(0) === MARK ? out.toString('utf16le', 0, 2 * k) : text;
}

/** The text `compactText` wrote. */
export function fullText(stored: string): string {
  if (stored.charCodeAt(0) !== MARK) return stored;
  const n = stored.length;
  const out = room(2 * n);
  let k = 0;
  for (let i = 1; i < n; i++) {
    let c = stored.charCodeAt(i);
    if (c === MARK) {
      if (++i >= n) break;
      c = stored.charCodeAt(i);
    } else if (c < 128 && ASCII[c]! > 0) c = ASCII[c]!;
    out[2 * k] = c & 0xff;
    out[2 * k + 1] = c >>> 8;
    k++;
  }
  return out.toString('utf16le', 0, 2 * k);
}

const same = (text: string): string => text;

function pack(value: unknown, skip?: string, text: (s: string) => string = same): unknown {
  if (typeof value === 'string') return text(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => pack(item, undefined, text));
    return typeof items[0] === 'number' || items[0] === ESCAPE ? [ESCAPE, ...items] : items;
  }
  // Keys in KEYS' order by insertion (an object holds a dozen at most); no entries, no sort:
  // the loader packs every row, and this is its share of the CPU.
  const places: number[] = [];
  const packed: unknown[] = [0];
  let extra: Record<string, unknown> | undefined;
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || key === skip) continue;
    const place = PLACE.get(key);
    if (place === undefined) {
      (extra ??= {})[key] = pack(v, undefined, text);
      continue;
    }
    let at = places.length;
    while (at > 0 && places[at - 1]! > place) at--;
    // The validator makes a deal's keys in KEYS' order: a push, which costs less than a splice.
    if (at === places.length) {
      places.push(place);
      packed.push(pack(v, undefined, text));
    } else {
      places.splice(at, 0, place);
      packed.splice(at + 1, 0, pack(v, undefined, text));
    }
    // 2 ** place, not 1 << place: the bits pass 31 (KEYS has more than 32 keys; a double holds 53).
    packed[0] = (packed[0] as number) + 2 ** place;
  }
  if (extra) packed.push(extra);
  return packed;
}

function unpack(raw: unknown, text: (s: string) => string = same): unknown {
  if (typeof raw === 'string') return text(raw);
  if (!Array.isArray(raw)) return raw;
  const value = raw as unknown[];
  if (value[0] === ESCAPE) return value.slice(1).map((item) => unpack(item, text));
  if (typeof value[0] !== 'number') return value.map((item) => unpack(item, text));
  const bits = value[0];
  const out: Record<string, unknown> = {};
  let next = 1;
  // Only the set bits, lowest first, 32 at a time (bit operators are 32-bit): a worker unpacks
  // a deal's eight or so objects a job, and testing all 45 places of each cost about 20 µs a deal.
  const low = bits % 2 ** 32;
  for (const [word, base] of [
    [low, 0],
    [(bits - low) / 2 ** 32, 32],
  ] as const) {
    let rest = word | 0;
    while (rest !== 0) {
      const bit = rest & -rest;
      const key = KEYS[base + 31 - Math.clz32(bit)];
      const packed = value[next++];
      // (A key a later version added: its value is skipped, the others stay in their places.)
      if (key !== undefined) out[key] = unpack(packed, text);
      rest ^= bit;
    }
  }
  const extra = value[next];
  if (extra !== null && typeof extra === 'object' && !Array.isArray(extra))
    for (const [key, v] of Object.entries(extra)) out[key] = unpack(v, text);
  return out;
}

/** The deal packed as `c`, without its dealId (the job has it), its texts compact (compactText). */
export function packDealCompact(deal: Deal): PackedDeal {
  return pack(deal, 'dealId', compactText) as PackedDeal;
}

/** The deal `packDealCompact` packed, with the job's dealId. */
export function unpackDealCompact(packed: PackedDeal, dealId: string): Deal {
  return { dealId, ...(unpack(packed, fullText) as Omit<Deal, 'dealId'>) };
}

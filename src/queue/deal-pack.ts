/**
 * A deal as a waiting job keeps it in Redis: positional JSON. A deal's key names
 * (`"issuerName":`, `"apartmentType":` ...) were about 400 of its 900 to 1,000 bytes, and
 * BullMQ stores every waiting job's data as one string: a night of 200,000 rows paid about
 * 80 MB for key names alone. An object is written as an array: first a number whose bit i
 * says that KEYS[i] is present, then those keys' values in KEYS' order, then, only when
 * there are any, the keys KEYS does not know, as an object (so a deal with a field added
 * later still travels whole). A real array stays an array; one that could be read as an
 * object (its first item a number, or the escape) gets the escape in front. The deal's
 * dealId is the job's own (`DealJobData.dealId`) and is not written twice.
 */
import type { Deal } from '../input/deal.js';

/**
 * Every key a deal holds (src/input/deal.ts), at every depth. Append only: a key's place is
 * its bit in jobs already waiting in Redis, which a new version must read as written.
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
] as const;

const PLACE: ReadonlyMap<string, number> = new Map(KEYS.map((key, i) => [key, i]));
/** In front of a real array whose first item would read as an object's key bits. */
const ESCAPE = '#';

/** A deal as `DealJobData.d` holds it (see above). */
export type PackedDeal = unknown[];

function pack(value: unknown, skip?: string): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => pack(item));
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
      (extra ??= {})[key] = pack(v);
      continue;
    }
    let at = places.length;
    while (at > 0 && places[at - 1]! > place) at--;
    places.splice(at, 0, place);
    packed.splice(at + 1, 0, pack(v));
    // 2 ** place, not 1 << place: the bits pass 31 (KEYS has more than 32 keys; a double holds 53).
    packed[0] = (packed[0] as number) + 2 ** place;
  }
  if (extra) packed.push(extra);
  return packed;
}

function unpack(raw: unknown): unknown {
  if (!Array.isArray(raw)) return raw;
  const value = raw as unknown[];
  if (value[0] === ESCAPE) return value.slice(1).map(unpack);
  if (typeof value[0] !== 'number') return value.map(unpack);
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
      if (key !== undefined) out[key] = unpack(packed);
      rest ^= bit;
    }
  }
  const extra = value[next];
  if (extra !== null && typeof extra === 'object' && !Array.isArray(extra))
    for (const [key, v] of Object.entries(extra)) out[key] = unpack(v);
  return out;
}

/** The deal packed, without its dealId (the job has it). */
export function packDeal(deal: Deal): PackedDeal {
  return pack(deal, 'dealId') as PackedDeal;
}

/** The deal `packDeal` packed, with the job's dealId. */
export function unpackDeal(packed: PackedDeal, dealId: string): Deal {
  return { dealId, ...(unpack(packed) as Omit<Deal, 'dealId'>) };
}

/**
 * Picks the one suggest candidate that IS the row's property. Suggest returns
 * near matches (house 39 brings 39/1 too), so equality is decided here, after
 * normalising case, ё, street-type words, spaces and edge punctuation. The row's house
 * and apartment come normalised from the load (`д.` and `кв.` gone: src/input/address-parts.ts);
 * both sides' numbers are compared in the one form that module gives.
 */
import { numberKey } from '../../input/address-parts.js';
import type { SuggestCandidate } from '../../domain/gateway.js';

export interface AddressToMatch {
  street?: string;
  house: string;
  building?: string;
  structure?: string;
  apartment?: string;
}

export type MatchResult =
  | { kind: 'found'; candidate: SuggestCandidate }
  | { kind: 'not_found'; nearest: SuggestCandidate[] }
  | { kind: 'ambiguous'; candidates: SuggestCandidate[] };

/** Street-type words and their abbreviations, as banks and the register write them. */
const STREET_TYPE_WORDS = new Set([
  'ул',
  'улица',
  'пр-кт',
  'пр-т',
  'просп',
  'проспект',
  'пер',
  'переулок',
  'ш',
  'шоссе',
  'б-р',
  'бульвар',
  'наб',
  'набережная',
  'пл',
  'площадь',
  'пр',
  'проезд',
  'туп',
  'тупик',
  'аллея',
  'ал',
  'мкр',
  'микрорайон',
]);

const EDGE_PUNCTUATION = /^[\s.,;:!?"'«»()[\]{}\-–—/\\№#]+|[\s.,;:!?"'«»()[\]{}\-–—/\\№#]+$/g;

function base(value: string): string {
  return value.toLowerCase().replace(/ё/g, 'е').replace(/\s+/g, ' ').trim();
}

/** Drops type words (`ул.`, `улица`, `проспект`) wherever they stand, then edge punctuation. */
function withoutWords(value: string | undefined, words: ReadonlySet<string>): string {
  // A row in a village may have no street.
  if (!value) return '';
  const kept = base(value)
    .split(/[\s,]+/)
    .filter((w) => w.length > 0 && !words.has(w.replace(/\.+$/, '')));
  return kept.join(' ').replace(EDGE_PUNCTUATION, '');
}

export function normalizeStreet(value: string | undefined): string {
  return withoutWords(value, STREET_TYPE_WORDS);
}

/** Candidates repeat from deal to deal (one building, many flats): their keys are kept, up to a bound. */
const candidateKeys = new Map<string, string>();
const MAX_CACHED_KEYS = 10_000;

function candidateKey(c: SuggestCandidate): string {
  const raw = `${c.street}\u0000${c.house}\u0000${c.apartment}`;
  let key = candidateKeys.get(raw);
  if (key === undefined) {
    const [number, building, structure] = c.house.split('|');
    const streetName = c.street.split('|')[0];
    key = [normalizeStreet(streetName), numberKey(number), numberKey(building), numberKey(structure), numberKey(c.apartment)].join(
      '\u0000',
    );
    if (candidateKeys.size >= MAX_CACHED_KEYS) candidateKeys.clear();
    candidateKeys.set(raw, key);
  }
  return key;
}

/** House parts and apartments compare whole, without inner spaces: `39 / 1` is `39/1`, `15 А` is `15а`; `39` is never `39/1`. */
function rowKey(a: AddressToMatch): string {
  return [normalizeStreet(a.street), numberKey(a.house), numberKey(a.building), numberKey(a.structure), numberKey(a.apartment)].join(
    '\u0000',
  );
}

export function matchCandidate(address: AddressToMatch, candidates: readonly SuggestCandidate[]): MatchResult {
  const wanted = rowKey(address);
  const equal = candidates.filter((c) => candidateKey(c) === wanted);
  // The same cadastral number listed twice is one object, not an ambiguity.
  const distinct = [...new Map(equal.map((c) => [c.objectCn, c])).values()];
  if (distinct.length === 1) return { kind: 'found', candidate: distinct[0]! };
  if (distinct.length > 1) return { kind: 'ambiguous', candidates: distinct };
  return { kind: 'not_found', nearest: candidates.slice(0, 3) };
}

/** A candidate as a clerk reads it: `54:35:000000:5013 (ТАТЬЯНЫ СНЕЖИНОЙ УЛ, д. 39/1, кв. 120)`. */
export function describeCandidate(c: SuggestCandidate): string {
  const [name, abbr] = c.street.split('|');
  const [number, building, structure] = c.house.split('|');
  const house = [number, building ? `к. ${building}` : '', structure ? `стр. ${structure}` : ''].filter(Boolean).join(' ');
  const parts = [[name, abbr].filter(Boolean).join(' '), house ? `д. ${house}` : '', c.apartment ? `кв. ${c.apartment}` : ''].filter(
    Boolean,
  );
  return `${c.objectCn} (${parts.join(', ')})`;
}

/**
 * House and apartment cells as banks write them (`д. 39`, `39 корп. 1`, `кв. 33`,
 * `Квартира №33`) to the bare numbers the gateway wants, once, at load: the suggest
 * query, the candidate matcher and the docflow request all use what this gives.
 * Also the one comparison form of a house part or an apartment (the matcher's key).
 */
import { APARTMENT_TYPES } from '../domain/deal.js';

export type ApartmentType = (typeof APARTMENT_TYPES)[number];

/** The words that may stand before an apartment number, and the type each means (realty-api-notes: `кв`, `ком`, `пом`, `бокс`). */
const APARTMENT_WORDS: Readonly<Record<string, ApartmentType>> = {
  квартира: 'кв',
  кв: 'кв',
  комната: 'ком',
  ком: 'ком',
  помещение: 'пом',
  пом: 'пом',
  бокс: 'бокс',
};
// Longest first: `квартира` before `кв`. The word ends at a dot, a space, `№` or a digit.
const APARTMENT_PREFIX = /^(квартира|кв|комната|ком|помещение|пом|бокс)(?:\.\s*|\s+|(?=[№\d]))/iu;

type HousePartName = 'house' | 'building' | 'structure';
const HOUSE_WORDS: Readonly<Record<string, HousePartName>> = {
  дом: 'house',
  д: 'house',
  корпус: 'building',
  корп: 'building',
  к: 'building',
  строение: 'structure',
  стр: 'structure',
  литера: 'structure',
  литер: 'structure',
  лит: 'structure',
};
/**
 * A house-part word: at the start, after a space or comma, or glued to the number before it
 * (`39к1`); ended by a dot, a space or a digit, and followed by a value (`15к` is a house letter).
 */
const HOUSE_MARKER = /(?:^|(?<=[\s,\d]))(дом|д|корпус|корп|к|строение|стр|литера|литер|лит)(?:\.\s*|\s+|(?=\d))(?=№?\s*[\p{L}\d])/giu;

const EDGE_PUNCTUATION = /^[\s.,;:!?"'«»()[\]{}\-–—/\\№#]+|[\s.,;:!?"'«»()[\]{}\-–—/\\№#]+$/gu;

/**
 * A number as the register writes it: no spaces inside (`15 А` is `15А`, `39 / 1` is
 * `39/1`), letters upper-case, no punctuation or `№` at either end.
 */
export function compactNumber(value: string): string {
  return value.replace(EDGE_PUNCTUATION, '').replace(/\s+/g, '').toUpperCase();
}

/** What two numbers are compared by: their compact form, `ё` as `е`. */
export function numberKey(value: string | undefined): string {
  return value ? compactNumber(value).replace(/Ё/g, 'Е') : '';
}

export interface ApartmentParts {
  name: string;
  /** The type its word named (`пом. 5` → `пом`); absent when the cell is a bare number. */
  type?: ApartmentType;
}

/** `кв. 33`, `Квартира №33`, `пом.5`, `33` → the number, and the type its word named. */
export function splitApartment(value: string): ApartmentParts {
  const prefix = APARTMENT_PREFIX.exec(value.trim());
  if (!prefix) return { name: compactNumber(value) };
  return { name: compactNumber(value.trim().slice(prefix[0].length)), type: APARTMENT_WORDS[prefix[1]!.toLowerCase()]! };
}

export type HouseParts = { house: string; building?: string; structure?: string };

/** The parts a house cell names, each compact; `text` is trimmed. A part named twice yields the message of the problem. */
function scanHouse(text: string): Partial<HouseParts> | string {
  const parts: Partial<Record<HousePartName, string>> = {};
  let kind: HousePartName = 'house';
  let from = 0;
  const take = (end: number): string | undefined => {
    const part = compactNumber(text.slice(from, end));
    if (part === '') return undefined;
    if (parts[kind] !== undefined) return `names the ${kind === 'house' ? 'house number' : kind} twice`;
    parts[kind] = part;
    return undefined;
  };
  for (const marker of text.matchAll(HOUSE_MARKER)) {
    const next = HOUSE_WORDS[marker[1]!.toLowerCase()]!;
    // `д`/`дом` names the house only at the start: elsewhere `д` is a house letter.
    if (next === 'house' && marker.index !== 0) continue;
    const problem = take(marker.index);
    if (problem) return problem;
    kind = next;
    from = marker.index + marker[0].length;
  }
  return take(text.length) ?? parts;
}

/**
 * `д. 39`, `дом 39, корп. 1`, `39к1 стр. 2`, `39 лит. А` → number, building, structure;
 * `39/1` stays one number (a house of its own, never 39 корпус 1). A cell that names a part
 * twice, or no house number, yields the message of the problem.
 */
export function splitHouse(value: string): HouseParts | string {
  const parts = scanHouse(value.trim());
  if (typeof parts === 'string') return parts;
  if (parts.house === undefined) return 'must start with the house number';
  return parts as HouseParts;
}

/** A building or structure cell (`корп. 2`, `стр 1`, `2`) → its number. */
export function housePartNumber(value: string): string {
  const parts = scanHouse(value.trim());
  const number = typeof parts === 'string' ? undefined : (parts.building ?? parts.structure ?? parts.house);
  return number ?? compactNumber(value);
}

/** The house as one name, for an address that has no separate building and structure: `39 к1 стр2`. */
export function houseName(house: string, building?: string, structure?: string): string {
  return [house, building ? `к${building}` : '', structure ? `стр${structure}` : ''].filter(Boolean).join(' ');
}

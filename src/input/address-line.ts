/**
 * One combined address cell (`"address": "Адрес"` in the mapping), as a bank's system writes it:
 * `Новосибирская обл., г. Новосибирск, ул. Ленина, д. 5, корп. 2, кв. 9` → the cells of the
 * separate columns (region, district, city or settlement, street, house, building, structure,
 * apartment), each as written: the validator then reads them as it reads those columns.
 */
import { levelOf, splitSettlement } from './address-levels.js';

export type AddressField = 'region' | 'district' | 'city' | 'settlement' | 'street' | 'house' | 'building' | 'structure' | 'apartment';
export type AddressCells = Partial<Record<AddressField, string>>;

/** Cities that are regions of their own: `г. Москва` first in an address is its region. */
const FEDERAL_CITIES = new Set(['москва', 'санкт-петербург', 'севастополь']);
/** What an address may start with that is no level: a postal index, the country. */
const SKIPPED = /^(?:\d{6}|россия|российская федерация|рф)$/iu;
const HOUSE_PART = /^(?:(дом|д)|(корпус|корп|к)|(строение|стр|литера|литер|лит))(?:\.\s*|\s*)(?=№?\s*\d)/iu;
const APARTMENT_PART = /^(?:квартира|кв|комната|ком|помещение|пом|бокс)(?:\.\s*|\s*)(?=№?\s*\d)/iu;
const NUMBER = /^№?\s*\d/u;

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];
const nth = (i: number): string => ORDINALS[i] ?? `${i + 1}th`;

/** The field a part with a house, apartment or level word (or a number) fills; undefined when it has none. */
function typedPlace(part: string, cells: AddressCells): [AddressField, string] | undefined {
  const house = HOUSE_PART.exec(part);
  if (house) return [house[1] ? 'house' : house[2] ? 'building' : 'structure', part];
  if (APARTMENT_PART.test(part)) return ['apartment', part];
  if (NUMBER.test(part)) return [cells.house === undefined ? 'house' : 'apartment', part];
  const level = levelOf(part);
  if (level !== 'settlement') return level === undefined ? undefined : [level, part];
  const settlement = splitSettlement(part);
  const city = settlement.abbreviation === 'г';
  if (city && cells.region === undefined && FEDERAL_CITIES.has(settlement.name.toLowerCase())) return ['region', settlement.name];
  return [city ? 'city' : 'settlement', part];
}

/** The field a part without a type word fills by its place: the region first, then the city; a problem after the street. */
function untypedPlace(part: string, i: number, cells: AddressCells): [AddressField, string] | string {
  if (cells.street !== undefined || cells.house !== undefined) return `has a ${nth(i)} part that names no level it knows`;
  if (cells.region === undefined) return ['region', part];
  if (cells.city === undefined && cells.settlement === undefined) return ['city', part];
  return `has a ${nth(i)} part that names no level it knows (a type word: обл., г., ул., д.)`;
}

/**
 * The cells the address names, or the message of its problem: a part it cannot tell (no
 * type word, and not where a region, a settlement, a house or an apartment stands), or a
 * level named twice. Messages name the part by its place, never its text.
 */
export function splitAddressLine(value: string): AddressCells | string {
  const cells: AddressCells = {};
  const parts = value
    .split(/[,;]/)
    .map((p) => p.trim())
    .filter((p) => p !== '');
  // A postal index and the country, at the start.
  let first = 0;
  while (first < Math.min(parts.length, 2) && SKIPPED.test(parts[first]!)) first++;
  for (let i = first; i < parts.length; i++) {
    const part = parts[i]!;
    const place = typedPlace(part, cells) ?? untypedPlace(part, i, cells);
    if (typeof place === 'string') return place;
    const [field, text] = place;
    if (cells[field] !== undefined) return `names the ${field} twice`;
    cells[field] = text;
  }
  if (cells.region === undefined) return 'names no region';
  if (cells.house === undefined) return 'names no house (д. 5)';
  return cells;
}

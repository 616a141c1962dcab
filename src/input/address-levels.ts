/**
 * Address levels as people write them (`Новосибирская обл.`, `г. Новосибирск`, `рп. Кольцово`,
 * `ул. Ленина`, `Хорошёвское ш.`) to what the contract wants: a region's and a district's name
 * as the register writes it (`Новосибирская область`), a settlement's and a street's name with
 * its abbreviation apart (`{name: "Ленина", abbreviation: "ул"}`), once, at load. The words are
 * the shared table's (src/domain/address-words.ts), which the sandbox's matching reads too.
 */
import {
  DISTRICT_TYPE_WORDS,
  REGION_TYPE_WORDS,
  SETTLEMENT_TYPE_WORDS,
  STREET_TYPE_WORDS,
  typeWordTable,
  type TypedName,
} from '../domain/address-words.js';

const STREETS = typeWordTable(STREET_TYPE_WORDS);
const SETTLEMENTS = typeWordTable(SETTLEMENT_TYPE_WORDS);
const REGIONS = typeWordTable(REGION_TYPE_WORDS);
const DISTRICTS = typeWordTable(DISTRICT_TYPE_WORDS);

export interface NamedLevel {
  name: string;
  /** The register's abbreviation of the type the text named (`ул`, `ш`, `г`, `пгт`); absent when it named none. */
  abbreviation?: string;
}

const named = ({ name, type }: TypedName): NamedLevel => (type === undefined ? { name } : { name, abbreviation: type });

/** `ул. Ленина`, `Ленина ул`, `пр-т Мира`, `Хорошёвское ш.` → the name and the street type's abbreviation. */
export const splitStreet = (value: string): NamedLevel => named(STREETS.split(value));

/** A street type column's word (`улица`, `Ш.`, `пр-т`) → its abbreviation; a word the table does not know, as written. */
export const streetTypeName = (value: string): string => STREETS.typeOf(value) ?? value;

/** `г. Новосибирск`, `пгт Краснообск`, `Кольцово рп`, `д. Ивановка` → the name and the settlement type's abbreviation. */
export const splitSettlement = (value: string): NamedLevel => named(SETTLEMENTS.split(value));

/** An adjective (`Новосибирская`, `Краснодарский`) takes its type word after it; a noun (`Татарстан`) after `Республика`. */
const ADJECTIVE = /(?:ая|яя|ий|ый|ой|ое)$/iu;

/**
 * `Новосибирская обл.`, `обл. Новосибирская`, `Респ. Татарстан`, `Татарстан Респ`, `Чувашская респ.`,
 * `Ханты-Мансийский АО`, `г. Москва` → the region's name as the register writes it: `Новосибирская
 * область`, `Республика Татарстан`, `Чувашская Республика`, `Ханты-Мансийский автономный округ`, `Москва`.
 */
export function regionName(value: string): string {
  const { name, type } = REGIONS.split(value);
  if (type === undefined || type === '') return name;
  return ADJECTIVE.test(name) ? `${name} ${type}` : `${type} ${name}`;
}

/** `Новосибирский р-н`, `р-н Новосибирский` → `Новосибирский район`. */
export function districtName(value: string): string {
  const { name, type } = DISTRICTS.split(value);
  return type === undefined ? name : `${name} ${type}`;
}

/** Whether a part of a combined address names a street, a settlement, a region or a district by its type word. */
export const levelOf = (part: string): 'street' | 'settlement' | 'region' | 'district' | undefined =>
  STREETS.split(part).type !== undefined
    ? 'street'
    : SETTLEMENTS.split(part).type !== undefined
      ? 'settlement'
      : REGIONS.split(part).type !== undefined
        ? 'region'
        : DISTRICTS.split(part).type !== undefined
          ? 'district'
          : undefined;

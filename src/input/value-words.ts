/**
 * The enumerations of a deal record, and the Russian words people write for their values
 * ("Квартира" for `flat`, "жен." for `female`, "Паспорт РФ" for `russPassport`): each field
 * accepts its values and these words, any case, `ё` as `е`, a dot at the end or not. A
 * mapping's `values` (src/input/mapping.ts) translate a bank's own words before these.
 */
import { APARTMENT_TYPES, AREA_UNITS, DOC_TYPES, OBJECT_TYPES } from '../domain/deal.js';
import { convert, problem, type Field } from './field-checks.js';

/** Value → the words that also mean it (lower case, `е` for `ё`, no dot at the end). */
type Words<T extends string> = Readonly<Record<T, readonly string[]>>;

const OBJECT_TYPE_WORDS: Words<(typeof OBJECT_TYPES)[number]> = {
  flat: ['квартира', 'кв'],
  room: ['комната', 'ком'],
  landPlot: ['земельный участок', 'участок', 'зу'],
  structure: ['сооружение'],
  unfinishedObject: ['объект незавершенного строительства', 'незавершенное строительство', 'онс'],
};

const GENDER_WORDS: Words<'male' | 'female'> = {
  male: ['м', 'муж', 'мужской', 'мужчина', 'm'],
  female: ['ж', 'жен', 'женский', 'женщина', 'f'],
};

const DOC_TYPE_WORDS: Words<(typeof DOC_TYPES)[number]> = {
  russPassport: [
    'паспорт',
    'паспорт рф',
    'паспорт гражданина рф',
    'паспорт гражданина российской федерации',
    'паспорт гражданина россии',
    '21',
  ],
  inostrannyyPassport: ['паспорт иностранного гражданина', 'иностранный паспорт', '10'],
  vul: ['временное удостоверение личности', 'временное удостоверение личности гражданина рф', 'вул', '14'],
  voennyyBilet: ['военный билет', '07'],
  birthCertificate: ['свидетельство о рождении', '03'],
};

const APARTMENT_TYPE_WORDS: Words<(typeof APARTMENT_TYPES)[number]> = {
  кв: ['квартира'],
  ком: ['комната'],
  пом: ['помещение', 'нежилое помещение'],
  бокс: [],
};

const AREA_UNIT_WORDS: Words<(typeof AREA_UNITS)[number]> = {
  'кв.м': ['кв. м', 'кв м', 'м2', 'м²', 'кв.метр', 'квадратный метр', 'квадратных метров', 'sq.m'],
  га: ['гектар', 'гектаров', 'ha'],
};

/** How a value is looked up: trimmed, lower case, `е` for `ё`, single spaces, no dot at the end. */
export const valueKey = (value: string): string => value.trim().toLowerCase().replace(/ё/g, 'е').replace(/\s+/g, ' ').replace(/\.$/, '');

export interface EnumerationOptions {
  /**
   * Whether a refused value is named in the message. Not for a person's fields (a column
   * mapped by mistake would put names there): those messages list the accepted words only.
   */
  named: boolean;
}

/**
 * A field that accepts `words`' values and their words, yielding the value; a value it does
 * not know fails naming the accepted values and words (and the value, when `named`).
 */
export function enumeration<T extends string>(words: Words<T>, options: EnumerationOptions): Field<T> {
  const byKey = new Map<string, T>();
  for (const [value, spellings] of Object.entries(words) as Array<[T, readonly string[]]>) {
    byKey.set(valueKey(value), value);
    for (const word of spellings) byKey.set(valueKey(word), value);
  }
  const accepted = (Object.entries(words) as Array<[T, readonly string[]]>)
    .map(([value, spellings]) => (spellings.length > 0 ? `${value} (${spellings.join(', ')})` : value))
    .join('; ');
  return convert((value) => {
    const found = byKey.get(valueKey(value));
    if (found !== undefined) return found;
    const what = options.named ? `is "${value.length > 40 ? `${value.slice(0, 40)}…` : value}", ` : 'is ';
    return problem(`${what}not one of the accepted values: ${accepted}`);
  });
}

export const objectTypeField = enumeration(OBJECT_TYPE_WORDS, { named: true });
export const apartmentTypeField = enumeration(APARTMENT_TYPE_WORDS, { named: true });
export const areaUnitField = enumeration(AREA_UNIT_WORDS, { named: true });
export const fileTypeField = enumeration<'pdf' | 'xml'>({ pdf: [], xml: [] }, { named: true });
export const genderField = enumeration(GENDER_WORDS, { named: false });
export const docTypeField = enumeration(DOC_TYPE_WORDS, { named: false });

/** The enumerations' values by field suffix: a mapping's `values` must translate to one of them. */
export const ENUMERATION_VALUES: Readonly<Record<string, readonly string[]>> = {
  objectType: OBJECT_TYPES,
  apartmentType: APARTMENT_TYPES,
  areaUnit: AREA_UNITS,
  agreementFileType: ['pdf', 'xml'],
  ownerGender: ['male', 'female'],
  owner2Gender: ['male', 'female'],
  ownerDocType: DOC_TYPES,
  owner2DocType: DOC_TYPES,
};

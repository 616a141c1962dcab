/**
 * A red team's ways to write a row's persons in a registry's text so that a pattern misses
 * them: case, declension, transliteration, look-alike letters, invisible characters, names
 * cut into pieces, full-width and other scripts' digits, short years. The row is the samples'
 * EKB-2026-000311 (spouses), its owner renamed Семёнов Андрей Петрович; the bank's
 * representative is the samples' profile's (Григорьева Елена Викторовна).
 */
import { HEADER, ROWS } from './fixtures.js';

export const DEAL_ID = 'EKB-2026-000311';

/** The row with its owner renamed (his SNILS, dates and passport stay the samples'). */
export function hostileRow(dealId = DEAL_ID): string[] {
  const row = [...ROWS.find((r) => r[0] === DEAL_ID)!];
  const set = (field: string, value: string) => (row[HEADER.indexOf(field)] = value);
  set('dealId', dealId);
  set('ownerSurname', 'Семёнов');
  set('ownerName', 'Андрей');
  set('ownerPatronymic', 'Петрович');
  return row;
}

/** What a registry writes around the value: lower case all round, so that no pattern of capitals catches the value. */
export const registryText = (fragment: string): string => `отказ: в сведениях о заявителе ${fragment} есть расхождение`;

export interface Spelling {
  /** What it is, for the test's title. */
  what: string;
  fragment: string;
  /**
   * What must not be left of it: squeezed (normalized, lower-cased, ё as е, only letters and
   * digits) unless it starts with `=`, then as it is in the normalized text.
   */
  needles: string[];
}

const zw = (text: string): string => Array.from(text).join('\u200b');

export const SPELLINGS: Spelling[] = [
  { what: 'a surname in capitals, е for ё', fragment: 'СЕМЕНОВ', needles: ['семенов'] },
  { what: 'a surname in lower case', fragment: 'семёнов', needles: ['семенов'] },
  { what: 'a surname in mixed case', fragment: 'СеМёНоВ', needles: ['семенов'] },
  { what: 'a surname declined (dative)', fragment: 'Семёнову', needles: ['семенов'] },
  { what: 'a surname declined (instrumental)', fragment: 'Семёновым', needles: ['семенов'] },
  { what: 'a surname with zero-width spaces', fragment: 'Се\u200bмё\u200bнов', needles: ['семенов'] },
  { what: 'a surname with a soft hyphen', fragment: 'Семё\u00adнов', needles: ['семенов'] },
  { what: 'a surname with ё as е and a combining diaeresis', fragment: 'Семе\u0308нов', needles: ['семенов'] },
  { what: 'a surname between bidi controls', fragment: '\u202eСемёнов\u202c', needles: ['семенов'] },
  { what: 'a surname in Latin capitals', fragment: 'SEMENOV', needles: ['semenov'] },
  { what: 'a surname transliterated with yo', fragment: 'Semyonov', needles: ['semyonov'] },
  { what: 'a surname transliterated with jo', fragment: 'Semjonov', needles: ['semjonov'] },
  { what: 'a surname transliterated with io', fragment: 'Semionov', needles: ['semionov'] },
  { what: 'a surname in full-width Latin', fragment: 'Ｓｅｍｅｎｏｖ', needles: ['semenov'] },
  { what: 'a surname with Latin look-alikes inside', fragment: 'Ceмёнов', needles: ['ceменов', 'семенов'] },
  { what: 'a surname all in Latin look-alike capitals', fragment: 'CEMEHOB', needles: ['cemehob'] },
  { what: 'a surname cut by hyphens', fragment: 'Се-мё-нов', needles: ['семенов'] },
  { what: 'a surname spelled out with spaces', fragment: 'С е м ё н о в', needles: ['семенов'] },
  { what: 'a surname spelled out with dots', fragment: 'С.Е.М.Ё.Н.О.В', needles: ['семенов'] },
  { what: 'the whole name in lower case', fragment: 'семёнов андрей петрович', needles: ['семенов', 'андрей', 'петрович'] },
  { what: 'the name in Latin, given name first', fragment: 'ANDREY SEMENOV', needles: ['andrey', 'semenov'] },
  { what: 'the surname with initials after it', fragment: 'Семёнов А.П.', needles: ['семенов', '=А.П'] },
  { what: 'the surname with initials before it', fragment: 'А. П. Семёнов', needles: ['семенов', '=А. П'] },
  { what: 'the whole name declined, given name first', fragment: 'Андрея Петровича Семёнова', needles: ['андре', 'петрович', 'семенов'] },
  { what: "the spouse's surname declined", fragment: 'морозовой', needles: ['морозов'] },
  { what: "the spouse's name in Latin", fragment: 'MOROZOVA DARYA', needles: ['morozova', 'darya'] },
  { what: "the representative's surname in lower case", fragment: 'григорьева', needles: ['григорьев'] },
  { what: "the representative's surname in Latin", fragment: 'GRIGORIEVA', needles: ['grigorieva'] },
  { what: 'the representative in Latin with initials', fragment: 'Grigoryeva E.V.', needles: ['grigoryeva', '=E.V'] },
  { what: 'a SNILS in full-width digits', fragment: '７３１-０２５-５４２ ４８', needles: ['73102554248'] },
  { what: 'a SNILS with no-break spaces', fragment: '731\u00a0025\u00a0542\u00a048', needles: ['73102554248'] },
  { what: 'a SNILS in Arabic-Indic digits', fragment: '٧٣١٠٢٥٥٤٢٤٨', needles: ['73102554248'] },
  { what: 'a SNILS with zero-width spaces between its digits', fragment: zw('73102554248'), needles: ['73102554248'] },
  { what: 'a SNILS without its check digits', fragment: '731-025-542', needles: ['731025542'] },
  { what: 'a date of birth as DD.MM.YY', fragment: '17.01.92', needles: ['170192'] },
  { what: 'a date of birth without leading zeros', fragment: '17.1.1992', needles: ['1711992'] },
  { what: 'a date of birth in full-width digits', fragment: '１７．０１．１９９２', needles: ['17011992'] },
  { what: 'a passport with the numero sign', fragment: '65 12 № 479876', needles: ['479876', '6512'] },
  { what: "the representative's passport glued", fragment: '4507318264', needles: ['4507318264', '318264'] },
  { what: "the spouse's date of birth as DD.MM.YY", fragment: '28.05.93', needles: ['280593'] },
];

/** A text's letters as the needles are looked for in them: lower case, no marks (ё as е), nothing but letters and digits. */
export const squeeze = (text: string): string =>
  text
    .normalize('NFKC')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');

/** A text's digits as ASCII (the table's other scripts: full-width by NFKC, Arabic-Indic by hand), invisible characters dropped. */
const plainDigits = (text: string): string =>
  text
    .normalize('NFKC')
    .replace(/\p{Cf}/gu, '')
    .replace(/[\u0660-\u0669]/g, (d) => String(d.charCodeAt(0) - 0x660));

/** A UUID, as the gateway's docflow and file ids are: random hex, no one's data. */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * The needles of `spelling` left in `text` (one cell, one value): [] when none is. A number is
 * found only whole, its digits apart by a few separators at most (not inside a timestamp). The
 * gateway's ids are taken out first: a random docflow id holds a needle's four digits now and
 * then (`…-6512-…` failed a CI run), and an id is no person's data.
 */
export function leftOf(spelling: Spelling, text: string): string[] {
  const own = text.replace(UUID, '');
  const squeezed = squeeze(own);
  const digits = plainDigits(own);
  return spelling.needles.filter((n) => {
    if (n.startsWith('=')) return own.normalize('NFKC').includes(n.slice(1));
    if (!/^\d+$/.test(n)) return squeezed.includes(n);
    return new RegExp(`(?<!\\d)${n.split('').join('[^\\p{L}\\p{N}]{0,3}')}(?!\\d)`, 'u').test(digits);
  });
}

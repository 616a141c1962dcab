/**
 * The gateway may echo a value it refused ("snils 123-456-789 64 is wrong",
 * "СЕМЕНОВ АНДРЕЙ", `badSnils12345678964`): before any of its text reaches a
 * results file, an outcome, a log line or an Error handed to BullMQ (its
 * failedReason, stacktrace and events stream), every person of the row is
 * masked: the deal's owners and the bank profile's representative. Names, birth
 * place, SNILS, passport (series, number, issuer), dates of birth and of issue,
 * and the street and FIAS id of their addresses; in any case, ё and е alike,
 * digits however they are separated, dates as 1980-01-02, 02.01.1980 or 02.01.80. The text
 * is read normalized first (src/privacy/normalize-text.ts: full-width digits, zero-width
 * spaces, soft hyphens), and the persons' names are masked also as a registry may spell
 * them otherwise (src/privacy/mask-names.ts: declined, transliterated, cut into pieces,
 * with their initials).
 *
 * One function, maskPersonalData, for every such text. Its pattern is built on the
 * first failure of a row (a successful row never pays for it) and kept with the deal.
 */
import type { Deal, Owner } from '../domain/deal.js';
import type { BankProfile } from '../input/profile.js';
import type { Address, Person } from '../domain/gateway.js';
import { MASK, maskNames } from '../privacy/mask-names.js';
import { exactMatcher, type NameMatcher } from '../privacy/name-filter.js';
import { normalizeText } from '../privacy/normalize-text.js';
import { personsOf } from '../privacy/persons.js';

export { MASK };

/**
 * The gaps are unbounded runs (`*`, `+`), not a few characters (`{0,3}`): V8 compiles a small
 * bounded repeat as that many copies of its class, and a row's pattern has about 150 of them,
 * which took 14 to 18 ms to compile for every failed row against 1.5 with runs
 * (docs/performance.md). A gap's class holds no digit and no letter, so a run cannot take what
 * the next part needs: the match stays linear, and a number spelt with wider gaps is masked too.
 */
/** Between two digits of a number: none, or spaces, dashes, dots, slashes. */
const DIGIT_GAP = '[\\s._/\\-\\u2010-\\u2015]*';
/** Between the parts of a date. */
const DATE_GAP = '[\\s./\\-\\u2010-\\u2015]*';
/**
 * Letters as explicit ranges, and no `u` flag: Unicode property classes make V8 about twice as
 * slow to build and compile a row's pattern, and one is made for every failed row. `i` without
 * `u` folds Cyrillic case all the same (е/Е, ё/Ё).
 */
const CYRILLIC_LETTER = '[\\u0400-\\u04ff]';
const LATIN_LETTER = '[a-z\\u00c0-\\u024f]';
/** Between the words of a name or a place: any punctuation or spaces. */
const WORD_GAP = '[^0-9a-z\\u00c0-\\u024f\\u0400-\\u04ff]+';
const CYRILLIC = /^[\u0400-\u04ff]/;

/** ё and е are one letter to a person typing or a system normalising (the text is NFC: ё is one character). */
const letter = (c: string): string => (c === 'е' || c === 'ё' || c === 'Е' || c === 'Ё' ? '[её]' : c);

/** A number of at least 4 digits, not inside a longer one; undefined when shorter. */
function digitsPattern(value: string): string | undefined {
  const digits = value.replace(/\D/g, '');
  return digits.length >= 4 ? `(?<!\\d)${digits.split('').join(DIGIT_GAP)}(?!\\d)` : undefined;
}

/** A word's last letter that Russian declension replaces: Семёнова, Семёновой; Андрей, Андрея. */
const DECLINED_ENDING = /[аяоеёьйыиу]$/iu;

/**
 * Words (a name, a birth place, a street, an issuer): whole words only, so a short name
 * does not mask inside other words; a last word of 4 letters or more also in its declined
 * forms ("Семёнову", "Семёновой" for "Семёнова"), as a message may decline it.
 */
function wordsPattern(value: string): string | undefined {
  const words = value.normalize('NFC').match(/[\p{L}\p{N}]+/gu);
  if (!words || words.join('').replace(/\P{L}/gu, '').length < 2) return undefined;
  const l = CYRILLIC.test(words[0]) ? CYRILLIC_LETTER : LATIN_LETTER;
  const last = words[words.length - 1]!;
  const declinable = last.length >= 4;
  if (declinable && last.length >= 5 && DECLINED_ENDING.test(last)) words[words.length - 1] = last.slice(0, -1);
  const body = words.map((w) => Array.from(w, letter).join('')).join(WORD_GAP);
  return `(?<!${l})${body}${declinable ? `${l}{0,3}` : ''}(?!${l})`;
}

/** A document number: digits alone (with any separators) are a number; with letters, words and their digit runs. */
function numberPatterns(value: string | undefined): string[] {
  if (!value) return [];
  if (/^[\d\s._/-]+$/.test(value)) return [digitsPattern(value)].filter((p): p is string => p !== undefined);
  return [wordsPattern(value), ...(value.match(/\d{4,}/g) ?? []).map(digitsPattern)].filter((p): p is string => p !== undefined);
}

/** YYYY-MM-DD, in that order and as DD.MM.YYYY or DD.MM.YY, leading zeros optional. */
function datePattern(iso: string | undefined): string | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso ?? '');
  if (!m) return undefined;
  const [, y, mo, d] = m as unknown as [string, string, string, string];
  const part = (two: string): string => (two.startsWith('0') ? `0?${two[1]}` : two);
  const dm = `${part(d)}${DATE_GAP}${part(mo)}${DATE_GAP}`;
  return `(?<!\\d)(?:${y}${DATE_GAP}${part(mo)}${DATE_GAP}${part(d)}|${dm}${y}|${dm}${y.slice(2)})(?!\\d)`;
}

/** A FIAS id (a UUID), with or without its dashes. */
function uuidPattern(value: string | undefined): string | undefined {
  const hex = value?.replace(/[^0-9a-f]/gi, '') ?? '';
  return hex.length >= 16 ? `(?<![0-9a-f])${hex.split('').join('-?')}(?![0-9a-f])` : undefined;
}

interface PersonValues {
  words: Array<string | undefined>;
  snils: string;
  series?: string | undefined;
  number: string;
  issuerCode?: string | undefined;
  dates: Array<string | undefined>;
  fiasId?: string | undefined;
  street?: string | undefined;
}

function patternsOf(p: PersonValues, propertyStreet: string | undefined): string[] {
  const snils = p.snils.replace(/\D/g, '');
  const street = p.street && (!propertyStreet || fold(p.street) !== fold(propertyStreet)) ? p.street : undefined;
  return [
    ...[...p.words, street].map((w) => (w ? wordsPattern(w) : undefined)),
    digitsPattern(snils),
    // The SNILS without its two check digits is the person's number all the same.
    snils.length === 11 ? digitsPattern(snils.slice(0, 9)) : undefined,
    ...numberPatterns(p.series),
    ...numberPatterns(p.number),
    p.series && /^[\d\s-]+$/.test(p.series + p.number) ? digitsPattern(p.series + p.number) : undefined,
    ...numberPatterns(p.issuerCode),
    ...p.dates.map(datePattern),
    uuidPattern(p.fiasId),
  ].filter((s): s is string => s !== undefined);
}

const fold = (s: string): string =>
  s
    .normalize('NFC')
    .toLowerCase()
    .replace(/ё/g, 'е')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();

function ownerValues(o: Owner): PersonValues {
  return {
    words: [o.surname, o.name, o.patronymic, o.birthPlace, o.doc.issuerName],
    snils: o.snils,
    series: o.doc.series,
    number: o.doc.number,
    issuerCode: o.doc.issuerCode,
    dates: [o.birthDate, o.doc.issueDate],
    fiasId: o.address.kind === 'fias' ? o.address.fiasId : undefined,
    street: o.address.kind === 'structured' ? o.address.street : undefined,
  };
}

function personValues(p: Person): PersonValues {
  const address: Address = p.address;
  const doc = p.identityDocument;
  return {
    words: [p.surname, p.name, p.patronymic, p.birthPlace, doc.issuer.name],
    snils: p.snils,
    series: doc.series,
    number: doc.number,
    issuerCode: doc.issuer.code,
    dates: [p.dateBirth, doc.issueDate],
    fiasId: 'fiasId' in address ? address.fiasId : undefined,
    street: 'region' in address ? address.street?.name : undefined,
  };
}

/** The representative is the same for every row of a batch: their patterns are made once per profile. */
const representatives = new WeakMap<BankProfile, string[]>();
/** Each deal's pattern and name matcher, with the profile they were made with. */
const compiled = new WeakMap<Deal, { profile: BankProfile | undefined; pattern: RegExp | undefined; names: NameMatcher | undefined }>();

/** One pattern for every person of the row (the deal's owners, the profile's representative); undefined when there is none. */
export function personalPattern(deal: Deal | undefined, profile?: BankProfile): RegExp | undefined {
  return compiledFor(deal, profile).pattern;
}

function compiledFor(
  deal: Deal | undefined,
  profile: BankProfile | undefined,
): { pattern: RegExp | undefined; names: NameMatcher | undefined } {
  const cached = deal ? compiled.get(deal) : undefined;
  if (cached && cached.profile === profile) return cached;
  let representative = profile ? representatives.get(profile) : undefined;
  if (profile && !representative) {
    representative = profile.representative?.person ? patternsOf(personValues(profile.representative.person), undefined) : [];
    representatives.set(profile, representative);
  }
  const parts = [...(deal?.owners ?? []).flatMap((o) => patternsOf(ownerValues(o), deal?.street)), ...(representative ?? [])];
  // Longest first: a whole SNILS or passport is masked before a part of it could be.
  parts.sort((a, b) => b.length - a.length);
  const pattern = parts.length > 0 ? new RegExp([...new Set(parts)].join('|'), 'gi') : undefined;
  const made = { profile, pattern, names: exactMatcher(personsOf(deal, profile)) };
  if (deal) compiled.set(deal, made);
  return made;
}

/** `text` with every personal value of the row's persons replaced by `***`. */
export function maskPersonalData(text: string, deal: Deal | undefined, profile?: BankProfile): string {
  if (!text) return text;
  const { pattern, names } = compiledFor(deal, profile);
  if (!pattern && !names) return text;
  // Names first: beside a name still whole, its initials are known for what they are.
  const normal = normalizeText(text);
  const named = names ? maskNames(normal, names) : normal;
  return pattern ? named.replace(pattern, MASK) : named;
}

/**
 * Check digits of Russian identifiers (docs/input-format.md: ownerSnils, and the bank profile).
 * Pure functions over strings; only SNILS allows separators, every other number
 * is its bare digits.
 */

/** SNILS bodies up to 001-001-998 were issued before the check digits were defined. */
const SNILS_UNCHECKED_MAX_BODY = 1_001_998;

const INN10_WEIGHTS = [2, 4, 10, 3, 5, 9, 4, 6, 8];
const INN11_WEIGHTS = [7, 2, 4, 10, 3, 5, 9, 4, 6, 8];
const INN12_WEIGHTS = [3, 7, 2, 4, 10, 3, 5, 9, 4, 6, 8];

const digitAt = (digits: string, index: number): number => digits.charCodeAt(index) - 48;

const weightedSum = (digits: string, weights: readonly number[]): number =>
  weights.reduce((sum, weight, i) => sum + weight * digitAt(digits, i), 0);

/** The digits of a SNILS written with `-` and space separators, or undefined when it is not 11 digits. */
export function snilsDigits(value: string): string | undefined {
  const digits = value.replace(/[-\s]/g, '');
  return /^\d{11}$/.test(digits) ? digits : undefined;
}

/** The two check digits of a 9-digit SNILS body: weights 9..1, sum mod 101, 100 → 00. */
export function snilsCheckDigits(body9: string): string {
  if (!/^\d{9}$/.test(body9)) throw new RangeError('A SNILS body is 9 digits');
  const sum = weightedSum(body9, [9, 8, 7, 6, 5, 4, 3, 2, 1]);
  const check = sum < 100 ? sum : sum % 101 === 100 ? 0 : sum % 101;
  return String(check).padStart(2, '0');
}

export function isValidSnils(value: string): boolean {
  const digits = snilsDigits(value);
  if (digits === undefined) return false;
  const body = digits.slice(0, 9);
  return Number(body) <= SNILS_UNCHECKED_MAX_BODY || snilsCheckDigits(body) === digits.slice(9);
}

const checkDigit = (digits: string, weights: readonly number[]): number => (weightedSum(digits, weights) % 11) % 10;

/** INN of a legal entity (10 digits) or of a person (12 digits). */
export function isValidInn(value: string): boolean {
  if (/^\d{10}$/.test(value)) return checkDigit(value, INN10_WEIGHTS) === digitAt(value, 9);
  if (/^\d{12}$/.test(value)) {
    return checkDigit(value, INN11_WEIGHTS) === digitAt(value, 10) && checkDigit(value, INN12_WEIGHTS) === digitAt(value, 11);
  }
  return false;
}

/** The number formed by all digits but the last, modulo `divisor`, then modulo 10, equals the last digit. */
function isValidModulo(value: string, length: number, divisor: number): boolean {
  if (value.length !== length || !/^\d+$/.test(value)) return false;
  // At most 14 digits: below 2^53, so the number and its remainder are exact.
  return (Number(value.slice(0, -1)) % divisor) % 10 === digitAt(value, length - 1);
}

/** OGRN of a legal entity: 13 digits, the first 12 mod 11 (then mod 10). */
export function isValidOgrn(value: string): boolean {
  return isValidModulo(value, 13, 11);
}

/** OGRNIP of an individual entrepreneur: 15 digits, the first 14 mod 13 (then mod 10). */
export function isValidOgrnip(value: string): boolean {
  return isValidModulo(value, 15, 13);
}

/** KPP: tax office (4 digits), reason (2 digits or capital Latin letters), number (3 digits). */
export function isValidKpp(value: string): boolean {
  return /^\d{4}[0-9A-Z]{2}\d{3}$/.test(value);
}

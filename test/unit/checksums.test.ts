import { describe, expect, it } from 'vitest';
import {
  isValidInn,
  isValidKpp,
  isValidOgrn,
  isValidOgrnip,
  isValidSnils,
  snilsCheckDigits,
  snilsDigits,
} from '../../src/input/checksums.js';

// Expected values computed independently (python, the published algorithms).
describe('SNILS', () => {
  it.each([
    ['112-233-445 95', 'sum 95 < 100: the sum itself'],
    ['11223344595', 'no separators'],
    ['112 233 445 95', 'spaces only'],
    ['004-261-353 96', 'sum 96'],
    ['206-130-059 00', 'sum exactly 100 → 00'],
    ['100-356-259 00', 'sum exactly 101 → 00'],
    ['146-272-509 61', 'sum 162 > 101 → 162 mod 101 = 61'],
    ['544-544-369 00', 'sum 201 > 101 → mod 101 = 100 → 00'],
    ['001-001-999 65', 'first body where the checksum applies'],
    ['000-000-000 55', 'below 001-001-998: any check digits (the published example)'],
    ['001-001-998 17', 'the last body below the range'],
  ])('accepts %s (%s)', (value) => {
    expect(isValidSnils(value)).toBe(true);
  });

  it.each([
    ['112-233-445 96', 'wrong check digits'],
    ['206-130-059 100', '12 digits'],
    ['206-130-059 01', 'sum 100 wants 00'],
    ['544-544-369 01', 'sum 201 wants 00'],
    ['146-272-509 60', 'sum 162 wants 61'],
    ['001-001-999 00', 'in the range, wrong digits'],
    ['112-233-445 9', '10 digits'],
    ['112.233.445 95', 'dots are not separators'],
    ['112-233-44A 95', 'a letter'],
    ['', 'empty'],
  ])('refuses %s (%s)', (value) => {
    expect(isValidSnils(value)).toBe(false);
  });

  it('computes check digits for a body, 100 and 101 giving 00', () => {
    expect(snilsCheckDigits('112233445')).toBe('95');
    expect(snilsCheckDigits('206130059')).toBe('00');
    expect(snilsCheckDigits('100356259')).toBe('00');
    expect(snilsCheckDigits('146272509')).toBe('61');
    expect(snilsCheckDigits('004261353')).toBe('96');
    expect(() => snilsCheckDigits('12345678')).toThrow(RangeError);
  });

  it('gives the 11 digits of a well-formed SNILS and nothing for a malformed one', () => {
    expect(snilsDigits('112-233-445 95')).toBe('11223344595');
    expect(snilsDigits('112-233-445')).toBeUndefined();
  });
});

describe('INN', () => {
  it.each(['7707083893', '6663003127', '7701934587'])('accepts the legal entity INN %s', (value) => {
    expect(isValidInn(value)).toBe(true);
  });
  it.each(['500100732259'])('accepts the personal INN %s', (value) => {
    expect(isValidInn(value)).toBe(true);
  });
  it.each([
    ['7707083894', 'wrong 10th digit'],
    ['500100732258', 'wrong 12th digit'],
    ['500100732249', 'wrong 11th digit'],
    ['770708389', '9 digits'],
    ['77070838931', '11 digits'],
    ['77070838 3', 'a space'],
    ['', 'empty'],
  ])('refuses %s (%s)', (value) => {
    expect(isValidInn(value)).toBe(false);
  });
});

describe('OGRN and OGRNIP', () => {
  it.each(['1027700132195', '1026605606620', '1027700045174'])('accepts the OGRN %s', (value) => {
    expect(isValidOgrn(value)).toBe(true);
  });
  it.each(['1027700132196', '102770013219', '10277001321950', '102770013219A'])('refuses the OGRN %s', (value) => {
    expect(isValidOgrn(value)).toBe(false);
  });
  it('accepts a valid OGRNIP (mod 13) and refuses a wrong one or an OGRN', () => {
    expect(isValidOgrnip('304500116000157')).toBe(true);
    expect(isValidOgrnip('304500116000158')).toBe(false);
    expect(isValidOgrnip('1027700132195')).toBe(false);
    expect(isValidOgrn('304500116000157')).toBe(false);
  });
});

describe('KPP', () => {
  it.each(['770101001', '7701AB001', '660850001'])('accepts %s', (value) => {
    expect(isValidKpp(value)).toBe(true);
  });
  it.each(['77010100', '7701010011', '7701ab001', '77A101001', '770101 01'])('refuses %s', (value) => {
    expect(isValidKpp(value)).toBe(false);
  });
});

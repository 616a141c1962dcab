import { join } from 'node:path';
import { describe, it, expect, beforeAll } from 'vitest';
import type { Deal, Owner } from '../../src/domain/deal.js';
import { loadProfile, type BankProfile } from '../../src/input/profile.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import { ApiHttpError } from '../../src/errors.js';
import { describeApiError } from '../../src/worker/deal/gateway-failure.js';
import { maskPersonalData } from '../../src/worker/redact.js';
import { ROOT } from '../helpers/cli.js';
import { HEADER, ROWS } from '../helpers/fixtures.js';

const record = Object.fromEntries(HEADER.map((h, i) => [h, ROWS[0]![i] ?? '']));
const validated = createDealValidator()(record);
if (!validated.ok) throw new Error('the first sample row is valid');
const deal = validated.deal;
const owner = deal.owners[0]!;

/** The sample deal with its owner changed. */
const withOwner = (changes: Partial<Owner>): Deal => ({ ...deal, owners: [{ ...owner, ...changes }] });

describe('masking what the gateway echoes of a deal', () => {
  it('masks names in any case, and SNILS and passport digits however they are separated', () => {
    const s = owner.snils;
    const text = [
      `owner ${owner.surname.toUpperCase()} ${owner.name.toLowerCase()}`,
      `snils ${s.slice(0, 3)}-${s.slice(3, 6)}-${s.slice(6, 9)}-${s.slice(9)}`,
      `snils ${s.slice(0, 3)} ${s.slice(3, 6)} ${s.slice(6, 9)} ${s.slice(9)}`,
      `passport ${owner.doc.series!.slice(0, 2)} ${owner.doc.series!.slice(2)} ${owner.doc.number}`,
    ].join('; ');
    const masked = maskPersonalData(text, deal);
    expect(masked).not.toMatch(new RegExp(owner.surname, 'i'));
    expect(masked).not.toMatch(new RegExp(owner.name, 'i'));
    expect(masked.replace(/\D/g, '')).not.toContain(s);
    expect(masked).not.toContain(owner.doc.number);
    expect(masked).toContain('owner *** ***');
  });

  it('masks a surname whatever its case and whichever of ё and е either side wrote', () => {
    const semyonov = withOwner({ surname: 'Семёнов' });
    for (const echoed of ['СЕМЕНОВ', 'Семенов', 'СЕМЁНОВ', 'семёнов']) {
      expect(maskPersonalData(`owner ${echoed} refused`, semyonov)).toBe('owner *** refused');
    }
    expect(maskPersonalData('owner СЕМЁНОВ refused', withOwner({ surname: 'Семенов' }))).toBe('owner *** refused');
    // ё written as е followed by a combining diaeresis (decomposed Unicode).
    expect(maskPersonalData('owner Се\u0308менов', withOwner({ surname: 'Семенов' }))).toBe('owner ***');
  });

  it('masks a declined surname, and a short name only as a whole word', () => {
    expect(maskPersonalData('у заявителя СЕМЁНОВОЙ', withOwner({ surname: 'Семёнова' }))).toBe('у заявителя ***');
    const yan = withOwner({ name: 'Ян' });
    expect(maskPersonalData('Ян: дата 1 января', yan)).toBe('***: дата 1 января');
  });

  it('masks a SNILS with any separators, without its check digits, and glued into an error code', () => {
    const d = withOwner({ snils: '12345678964' });
    // Gaps of any width: a form's column padding, or a dash between spaces twice.
    const wide = ['123 -- 456 -- 789 -- 64', '123    456    789    64'];
    for (const echoed of [
      '123-456-789 64',
      '123 456 789 64',
      '12345678964',
      '123.456.789-64',
      'badSnils12345678964',
      '123-456-789',
      ...wide,
    ]) {
      expect(maskPersonalData(`snils ${echoed}`, d)).not.toMatch(/\d{3}/);
    }
    expect(maskPersonalData('badSnils12345678964', d)).toBe('badSnils***');
  });

  it('masks a passport as series and number apart, together, or glued', () => {
    const d = withOwner({ doc: { ...owner.doc, series: '5004', number: '123456' } });
    for (const echoed of ['50 04 123456', '5004 123456', '5004123456', '50-04 № 123456']) {
      expect(maskPersonalData(`passport ${echoed}`, d).replace(/[^\d]/g, '')).toBe('');
    }
  });

  it('masks dates of birth and of issue written as YYYY-MM-DD or DD.MM.YYYY, with or without leading zeros', () => {
    const d = withOwner({ birthDate: '1980-01-02', doc: { ...owner.doc, issueDate: '2006-11-20' } });
    for (const echoed of ['1980-01-02', '02.01.1980', '2.1.1980', '02/01/1980', '19800102', '20.11.2006', '2006-11-20']) {
      expect(maskPersonalData(`born ${echoed} ok`, d)).toBe('born *** ok');
    }
    expect(maskPersonalData('registered 1980-01-03', d)).toBe('registered 1980-01-03');
  });

  it("masks an owner's street and FIAS id, but not the street of the property itself", () => {
    const elsewhere = withOwner({
      address: { kind: 'structured', region: 'Москва', street: 'Профсоюзная', streetType: 'ул', house: '104' },
    });
    expect(maskPersonalData('owner lives at ул ПРОФСОЮЗНАЯ д 104', elsewhere)).toBe('owner lives at ул *** д 104');
    const athome = withOwner({
      address: { kind: 'structured', region: deal.region, street: deal.street!, streetType: 'ул', house: deal.house },
    });
    expect(maskPersonalData(`nearest: ул ${deal.street}`, athome)).toBe(`nearest: ул ${deal.street}`);
    const fias = withOwner({ address: { kind: 'fias', fiasId: '082458d8-7762-4294-affa-07286e8ccad2' } });
    expect(maskPersonalData('fias 082458D8-7762-4294-AFFA-07286E8CCAD2', fias)).toBe('fias ***');
    expect(maskPersonalData('fias 082458d877624294affa07286e8ccad2', fias)).toBe('fias ***');
  });

  it('leaves the rest of the message alone', () => {
    expect(maskPersonalData('validation: is required @ options.object.cadastralNumber', deal)).toBe(
      'validation: is required @ options.object.cadastralNumber',
    );
    expect(maskPersonalData('object 54:35:000000:5911, snils 000-000-000 55', deal)).toBe('object 54:35:000000:5911, snils 000-000-000 55');
  });
});

describe("masking the bank's representative", () => {
  let profile: BankProfile;
  beforeAll(async () => {
    profile = await loadProfile(join(ROOT, 'samples/bank-profile.json'));
  });

  it("masks the representative's names, SNILS, passport, issuer code and dates from the profile", () => {
    const text =
      'representative ГРИГОРЬЕВА ЕЛЕНА викторовна, snils 138 402 715-48, passport 4507 № 318264 (770093), born 17.05.1982, issued 05.06.2007';
    const masked = maskPersonalData(text, deal, profile);
    expect(masked).toBe('representative *** *** ***, snils ***, passport *** № *** (***), born ***, issued ***');
  });

  it('flattens a gateway error with its code and message masked', () => {
    const err = new ApiHttpError({
      status: 400,
      endpoint: 'docflows',
      body: {
        code: `badSnils${owner.snils}`,
        message: `${owner.surname.toUpperCase()}: not found`,
        target: 'options',
        errors: [{ code: 'passport', message: 'representative 45 07 318264', target: 'x' }],
      },
    });
    const d = describeApiError(err, (text) => maskPersonalData(text, deal, profile));
    expect(d).toEqual({
      errorCode: 'badSnils***',
      errorMessage: `400: badSnils***: ***: not found @ options; passport: representative *** @ x`,
      httpStatus: 400,
    });
  });
});

import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import type { Deal, DealValidation, FieldProblem } from '../../src/domain/deal.js';
import { CANONICAL_FIELDS, canonicalFieldName } from '../../src/input/fields.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import type { DealRecord } from '../../src/input/validate-deal.js';
import { parseProfile } from '../../src/input/profile.js';
import { buildEncumbranceRequest } from '../../src/docflows/registration/request.js';
import { suggestQuery } from '../../src/worker/deal/resolve-cadastral.js';

const TODAY = new Date(2026, 10, 21); // local 2026-11-21
const CONTENT_ID = 'b35ecbab-adde-488f-b01c-7133c90a261e';
const SIGNATURE_1 = 'd42a9a44-4ebb-40dd-9396-bf33dee9f95b';
const SIGNATURE_2 = '5f0c1a7e-2b6d-4c1e-9a3f-8e7d6c5b4a39';
const FIAS_ID = 'a6e699e0-c0c7-4126-88ca-88e6fbc98992';

/** A complete, valid record of one owner, as a CSV reader hands it over. */
function record(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    dealId: 'NSK-2026-000123',
    region: 'Новосибирская область',
    city: 'Новосибирск',
    street: 'Челюскинцев',
    house: '14',
    apartment: '81',
    areaValue: '56.2',
    ownerSurname: 'Кузнецов',
    ownerName: 'Андрей',
    ownerPatronymic: 'Викторович',
    ownerBirthDate: '1986-04-12',
    ownerBirthPlace: 'г. Новосибирск',
    ownerSnils: '112-233-445 95',
    ownerGender: 'male',
    ownerDocSeries: '50 06',
    ownerDocNumber: '104232',
    ownerDocIssueDate: '2006-05-03',
    ownerDocIssuerCode: '540-010',
    ownerDocIssuerName: 'ГУ МВД России по Новосибирской области',
    ownerRegion: 'Новосибирская область',
    ownerCity: 'Новосибирск',
    ownerStreet: 'Челюскинцев',
    ownerHouse: '14',
    ownerApartment: '81',
    agreementContentId: CONTENT_ID,
    agreementSignatureIds: SIGNATURE_1,
    ...overrides,
  };
}

const spouse = {
  owner2Surname: 'Кузнецова',
  owner2Name: 'Мария',
  owner2BirthDate: '1988-02-02',
  owner2BirthPlace: 'г. Бердск',
  owner2Snils: '146-272-509 61',
  owner2Gender: 'ж',
  owner2DocSeries: '5008',
  owner2DocNumber: '220344',
  owner2DocIssueDate: '2008-03-11',
  owner2DocIssuerName: 'ГУ МВД России по Новосибирской области',
  owner2FiasId: FIAS_ID,
};

function validate(rec: DealRecord): DealValidation {
  return createDealValidator({ today: TODAY })(rec);
}

function dealOf(rec: DealRecord): Deal {
  const result = validate(rec);
  if (!result.ok) throw new Error(`expected a valid record, got ${JSON.stringify(result.problems)}`);
  return result.deal;
}

function problemsOf(rec: DealRecord): FieldProblem[] {
  const result = validate(rec);
  if (result.ok) throw new Error('expected an invalid record');
  return result.problems;
}

describe('createDealValidator: a valid record', () => {
  it('becomes a normalised deal, with defaults filled and empty optional fields absent', () => {
    expect(dealOf(record({ district: '', building: '  ' }))).toEqual({
      dealId: 'NSK-2026-000123',
      objectType: 'flat',
      region: 'Новосибирская область',
      city: 'Новосибирск',
      street: 'Челюскинцев',
      streetType: 'ул',
      house: '14',
      apartment: '81',
      apartmentType: 'кв',
      areaValue: '56.2',
      areaUnit: 'кв.м',
      owners: [
        {
          surname: 'Кузнецов',
          name: 'Андрей',
          patronymic: 'Викторович',
          birthDate: '1986-04-12',
          birthPlace: 'г. Новосибирск',
          snils: '11223344595',
          gender: 'male',
          citizenship: 'Российская Федерация',
          doc: {
            type: 'russPassport',
            series: '5006',
            number: '104232',
            issueDate: '2006-05-03',
            issuerCode: '540-010',
            issuerName: 'ГУ МВД России по Новосибирской области',
          },
          address: {
            kind: 'structured',
            region: 'Новосибирская область',
            city: 'Новосибирск',
            street: 'Челюскинцев',
            streetType: 'ул',
            house: '14',
            apartment: '81',
          },
        },
      ],
      agreement: { contentId: CONTENT_ID, signatureIds: [SIGNATURE_1], fileType: 'pdf' },
    });
  });

  it('trims every value and drops keys of empty fields', () => {
    const deal = dealOf(record({ dealId: '  NSK-1  ', ownerSurname: ' Кузнецов ', district: '', ownerPatronymic: '' }));
    expect(deal.dealId).toBe('NSK-1');
    expect(deal.owners[0]!.surname).toBe('Кузнецов');
    expect('district' in deal).toBe(false);
    expect('patronymic' in deal.owners[0]!).toBe(false);
    expect('cadastralNumber' in deal).toBe(false);
  });

  it('reads a number from a JSON record as its text', () => {
    expect(dealOf({ ...record(), house: 14, apartment: 81 } as unknown as DealRecord)).toMatchObject({ house: '14', apartment: '81' });
  });

  it('ignores keys that are not canonical fields', () => {
    expect(validate(record({ errors: 'ownerSnils: checksum does not match', 'Номер сделки': 'x' })).ok).toBe(true);
  });

  it('normalises DD.MM.YYYY dates to YYYY-MM-DD and a decimal comma to a dot', () => {
    const deal = dealOf(record({ ownerBirthDate: '14.03.1988', ownerDocIssueDate: '02.04.2008', areaValue: '45,6' }));
    expect(deal.owners[0]!.birthDate).toBe('1988-03-14');
    expect(deal.owners[0]!.doc.issueDate).toBe('2008-04-02');
    expect(deal.areaValue).toBe('45.6');
  });
});

describe('createDealValidator: required fields', () => {
  const required = [
    'dealId',
    'region',
    'house',
    'agreementContentId',
    'ownerSurname',
    'ownerName',
    'ownerBirthDate',
    'ownerBirthPlace',
    'ownerSnils',
    'ownerGender',
    'ownerDocNumber',
    'ownerDocIssueDate',
    'ownerDocIssuerName',
  ];
  it.each(required)('refuses a record without %s, naming the field', (field) => {
    expect(problemsOf(record({ [field]: '' }))).toEqual([{ field, message: 'is required' }]);
  });
  it.each(required)('treats %s of spaces only as absent', (field) => {
    expect(problemsOf(record({ [field]: '   ' }))).toEqual([{ field, message: 'is required' }]);
  });
});

describe('createDealValidator: deal and property fields', () => {
  it('accepts a dealId of 100 printable characters and refuses 101 or a control character', () => {
    expect(validate(record({ dealId: 'D'.repeat(100) })).ok).toBe(true);
    expect(problemsOf(record({ dealId: 'D'.repeat(101) }))).toEqual([{ field: 'dealId', message: 'must be at most 100 characters' }]);
    expect(problemsOf(record({ dealId: 'NSK\u0007-1' }))).toEqual([{ field: 'dealId', message: 'must contain only printable characters' }]);
  });

  it('defaults objectType to flat, accepts a known one in any case, refuses an unknown one', () => {
    expect(dealOf(record()).objectType).toBe('flat');
    expect(dealOf(record({ objectType: 'landPlot' })).objectType).toBe('landPlot');
    expect(dealOf(record({ objectType: 'LANDPLOT' })).objectType).toBe('landPlot');
    expect(problemsOf(record({ objectType: 'house' }))).toEqual([
      {
        field: 'objectType',
        message:
          'is "house", not one of the accepted values: flat (квартира, кв); room (комната, ком); landPlot (земельный участок, участок, зу); ' +
          'structure (сооружение); unfinishedObject (объект незавершенного строительства, незавершенное строительство, онс)',
      },
    ]);
  });

  it('checks the cadastral number format when one is given', () => {
    expect(dealOf(record({ cadastralNumber: '77:06:0005011:2376' })).cadastralNumber).toBe('77:06:0005011:2376');
    expect(dealOf(record({ cadastralNumber: '54:35:101234:81' })).cadastralNumber).toBe('54:35:101234:81');
    expect(problemsOf(record({ cadastralNumber: '54:35:1012:81' }))).toEqual([
      { field: 'cadastralNumber', message: 'must be a cadastral number AA:BB:CCCCCC[C]:N' },
    ]);
  });

  it('defaults streetType to ул and keeps a given one', () => {
    expect(dealOf(record()).streetType).toBe('ул');
    expect(dealOf(record({ streetType: 'пр-кт' })).streetType).toBe('пр-кт');
  });

  it('defaults apartmentType to кв, accepts кв ком пом бокс, refuses others', () => {
    expect(dealOf(record()).apartmentType).toBe('кв');
    expect(dealOf(record({ apartmentType: 'бокс' })).apartmentType).toBe('бокс');
    expect(dealOf(record({ apartmentType: 'Квартира' })).apartmentType).toBe('кв');
    expect(problemsOf(record({ apartmentType: 'флэт' }))).toEqual([
      {
        field: 'apartmentType',
        message: 'is "флэт", not one of the accepted values: кв (квартира); ком (комната); пом (помещение, нежилое помещение); бокс',
      },
    ]);
  });

  it('defaults areaUnit to кв.м, accepts га, refuses others', () => {
    expect(dealOf(record()).areaUnit).toBe('кв.м');
    expect(dealOf(record({ areaUnit: 'га' })).areaUnit).toBe('га');
    expect(dealOf(record({ areaUnit: 'м2' })).areaUnit).toBe('кв.м');
    expect(problemsOf(record({ areaUnit: 'акр' }))).toEqual([
      {
        field: 'areaUnit',
        message:
          'is "акр", not one of the accepted values: кв.м (кв. м, кв м, м2, м², кв.метр, квадратный метр, квадратных метров, sq.m); га (гектар, гектаров, ha)',
      },
    ]);
  });

  it.each([
    ['45.6', '45.6'],
    ['45,6', '45.6'],
    ['38', '38'],
    ['1 200,50', '1200.50'],
  ])('reads the area %s as %s', (value, expected) => {
    expect(dealOf(record({ areaValue: value })).areaValue).toBe(expected);
  });

  it.each(['0', '0,0', '-5', 'abc', '45.6.1', '45,'])('refuses the area %s', (value) => {
    expect(problemsOf(record({ areaValue: value }))).toEqual([
      { field: 'areaValue', message: 'must be a positive decimal number (45.6 or 45,6)' },
    ]);
  });
});

describe('createDealValidator: dates', () => {
  it.each(['31.02.2015', '2015-02-29', '2015-13-01', '1990/01/01', '1.3.1988', '29.02.1900'])('refuses %s as not a real date', (value) => {
    expect(problemsOf(record({ ownerDocIssueDate: value }))).toEqual([
      { field: 'ownerDocIssueDate', message: 'must be a real date (YYYY-MM-DD or DD.MM.YYYY)' },
    ]);
  });

  it('accepts 29 February of a leap year in both forms', () => {
    expect(dealOf(record({ ownerDocIssueDate: '29.02.2008' })).owners[0]!.doc.issueDate).toBe('2008-02-29');
    expect(dealOf(record({ ownerDocIssueDate: '2000-02-29' })).owners[0]!.doc.issueDate).toBe('2000-02-29');
  });

  it('refuses a date after today and accepts today', () => {
    expect(problemsOf(record({ ownerDocIssueDate: '2026-11-22' }))).toEqual([
      { field: 'ownerDocIssueDate', message: 'must not be in the future' },
    ]);
    expect(dealOf(record({ ownerDocIssueDate: '21.11.2026' })).owners[0]!.doc.issueDate).toBe('2026-11-21');
  });

  it('refuses 1C’s empty date 01.01.0001 as older than 1900', () => {
    expect(problemsOf(record({ ownerBirthDate: '01.01.0001' }))).toEqual([
      { field: 'ownerBirthDate', message: 'must not be before 1900-01-01' },
    ]);
  });

  it('refuses an issue date before the birth date and accepts one on it', () => {
    expect(problemsOf(record({ ownerDocIssueDate: '1986-04-11' }))).toEqual([
      { field: 'ownerDocIssueDate', message: 'must not be before ownerBirthDate' },
    ]);
    expect(validate(record({ ownerDocIssueDate: '12.04.1986' })).ok).toBe(true);
  });
});

describe('createDealValidator: the owner', () => {
  it.each([
    ['male', 'male'],
    ['Female', 'female'],
    ['м', 'male'],
    ['Ж', 'female'],
    ['M', 'male'],
    ['f', 'female'],
  ])('reads the gender %s as %s', (value, expected) => {
    expect(dealOf(record({ ownerGender: value })).owners[0]!.gender).toBe(expected);
  });

  it('refuses an unknown gender', () => {
    // A person's field: the value is not named (a column mapped by mistake would put a name there).
    expect(problemsOf(record({ ownerGender: 'мужик' }))).toEqual([
      {
        field: 'ownerGender',
        message: 'is not one of the accepted values: male (м, муж, мужской, мужчина, m); female (ж, жен, женский, женщина, f)',
      },
    ]);
  });

  it('stores a SNILS as its 11 digits and refuses a wrong checksum or format', () => {
    expect(dealOf(record({ ownerSnils: '206 130 059 00' })).owners[0]!.snils).toBe('20613005900');
    expect(problemsOf(record({ ownerSnils: '112-233-445 96' }))).toEqual([{ field: 'ownerSnils', message: 'checksum does not match' }]);
    expect(problemsOf(record({ ownerSnils: '112-233-445' }))).toEqual([
      { field: 'ownerSnils', message: 'must be 11 digits (separators - and space allowed)' },
    ]);
  });

  it('defaults citizenship and keeps a given one', () => {
    expect(dealOf(record()).owners[0]!.citizenship).toBe('Российская Федерация');
    expect(dealOf(record({ ownerCitizenship: 'Республика Беларусь' })).owners[0]!.citizenship).toBe('Республика Беларусь');
  });

  it('defaults the document type to russPassport and refuses an unknown one', () => {
    expect(dealOf(record()).owners[0]!.doc.type).toBe('russPassport');
    expect(problemsOf(record({ ownerDocType: 'passport' }))).toEqual([
      { field: 'ownerDocType', message: expect.stringMatching(/^is not one of the accepted values: russPassport \(паспорт, /) as string },
    ]);
  });

  it('wants a Russian passport series of 4 digits (stored without spaces) and a number of 6', () => {
    expect(dealOf(record({ ownerDocSeries: '50 04' })).owners[0]!.doc.series).toBe('5004');
    expect(problemsOf(record({ ownerDocSeries: '' }))).toEqual([{ field: 'ownerDocSeries', message: 'is required' }]);
    expect(problemsOf(record({ ownerDocSeries: '500' }))).toEqual([
      { field: 'ownerDocSeries', message: 'must be 4 digits for a russPassport series' },
    ]);
    expect(problemsOf(record({ ownerDocNumber: '10423' }))).toEqual([
      { field: 'ownerDocNumber', message: 'must be 6 digits for a russPassport number' },
    ]);
  });

  it('takes the series and number of other documents as free text, the series optional', () => {
    const owner = dealOf(record({ ownerDocType: 'inostrannyyPassport', ownerDocSeries: '', ownerDocNumber: 'AB 1234567' })).owners[0]!;
    expect(owner.doc).toMatchObject({ type: 'inostrannyyPassport', number: 'AB 1234567' });
    expect('series' in owner.doc).toBe(false);
    expect(problemsOf(record({ ownerDocType: 'vul', ownerDocNumber: '' }))).toEqual([{ field: 'ownerDocNumber', message: 'is required' }]);
  });

  it('normalises the issuer code to NNN-NNN and refuses another form', () => {
    expect(dealOf(record({ ownerDocIssuerCode: '540001' })).owners[0]!.doc.issuerCode).toBe('540-001');
    expect(dealOf(record({ ownerDocIssuerCode: '540-001' })).owners[0]!.doc.issuerCode).toBe('540-001');
    expect(problemsOf(record({ ownerDocIssuerCode: '54-0001' }))).toEqual([
      { field: 'ownerDocIssuerCode', message: 'must be NNN-NNN or NNNNNN' },
    ]);
  });
});

describe('createDealValidator: the house and apartment, normalised once at load', () => {
  const parsed = parseProfile(JSON.parse(readFileSync(new URL('../../samples/bank-profile.json', import.meta.url), 'utf8')));
  if (!parsed.ok) throw new Error('samples/bank-profile.json is not valid');
  const PROFILE = parsed.profile;

  it('takes кв. 33 and д. 39 as 33 and 39, and suggest and the docflow get those', () => {
    const deal = dealOf(record({ house: 'д. 39', apartment: 'кв. 33' }));
    expect(deal).toMatchObject({ house: '39', apartment: '33', apartmentType: 'кв' });
    expect(suggestQuery(deal)).toMatchObject({ house: { number: '39' }, room: { number: '33' } });
    const request = buildEncumbranceRequest(deal, '54:35:000000:5911', PROFILE, 'http://gateway');
    expect(request.options.object.address).toMatchObject({ house: { name: '39', type: 'д' }, apartment: { type: 'кв', name: '33' } });
  });

  it('moves корпус and строение of the house cell to building and structure', () => {
    const deal = dealOf(record({ house: 'д. 87 корп. 2 стр. 1', apartment: '140' }));
    expect(deal).toMatchObject({ house: '87', building: '2', structure: '1' });
    expect(suggestQuery(deal).house).toEqual({ number: '87', buildingNumber: '2', sructureNumber: '1' });
    expect(dealOf(record({ house: '87', building: 'корп. 2' }))).toMatchObject({ house: '87', building: '2' });
    expect(dealOf(record({ house: '87 к2', building: '2' }))).toMatchObject({ house: '87', building: '2' });
  });

  it('keeps the type the apartment cell names when apartmentType is empty, and refuses two types', () => {
    expect(dealOf(record({ apartment: 'пом. 5' }))).toMatchObject({ apartment: '5', apartmentType: 'пом' });
    expect(dealOf(record({ apartment: 'пом. 5', apartmentType: 'пом' }))).toMatchObject({ apartment: '5', apartmentType: 'пом' });
    expect(dealOf(record({ apartment: '5', apartmentType: 'бокс' }))).toMatchObject({ apartment: '5', apartmentType: 'бокс' });
    expect(problemsOf(record({ apartment: 'кв. 5', apartmentType: 'пом' }))).toEqual([
      { field: 'apartment', message: 'names a type (кв, ком, пом, бокс) other than apartmentType' },
    ]);
  });

  it('refuses a house cell without a number, a building given twice otherwise, and a bare кв.', () => {
    expect(problemsOf(record({ house: 'д. 87 к2', building: '3', apartment: 'кв.' }))).toEqual([
      { field: 'house', message: 'names a корпус (building) other than building' },
      { field: 'apartment', message: 'must be a flat or premises number (33, кв. 33)' },
    ]);
    expect(problemsOf(record({ house: 'корп. 2' }))).toEqual([{ field: 'house', message: 'must start with the house number' }]);
  });

  it("normalises the owner's house and apartment too", () => {
    const address = dealOf(record({ ownerHouse: 'д. 14 корп. 1', ownerApartment: 'кв. 81' })).owners[0]!.address;
    expect(address).toMatchObject({ house: '14 к1', apartment: '81' });
    const fias = dealOf(record({ ownerFiasId: FIAS_ID, ownerApartment: 'ком. 3' })).owners[0]!.address;
    expect(fias).toEqual({ kind: 'fias', fiasId: FIAS_ID, apartment: '3', apartmentType: 'ком' });
  });
});

describe('createDealValidator: the owner address', () => {
  const noAddress = { ownerRegion: '', ownerCity: '', ownerStreet: '', ownerHouse: '', ownerApartment: '' };

  it('takes ownerFiasId, with the optional apartment, over a structured address', () => {
    expect(dealOf(record({ ownerFiasId: FIAS_ID })).owners[0]!.address).toEqual({ kind: 'fias', fiasId: FIAS_ID, apartment: '81' });
    expect(dealOf(record({ ...noAddress, ownerFiasId: FIAS_ID })).owners[0]!.address).toEqual({ kind: 'fias', fiasId: FIAS_ID });
  });

  it('refuses an ownerFiasId that is not a UUID', () => {
    expect(problemsOf(record({ ownerFiasId: 'a6e699e0-c0c7-4126-88ca' }))).toEqual([{ field: 'ownerFiasId', message: 'must be a UUID' }]);
  });

  it('takes ownerRegion and ownerHouse alone as a structured address with the default street type', () => {
    expect(dealOf(record({ ...noAddress, ownerRegion: 'Москва', ownerHouse: '5' })).owners[0]!.address).toEqual({
      kind: 'structured',
      region: 'Москва',
      streetType: 'ул',
      house: '5',
    });
  });

  it('refuses a record with no owner address, with no silent default', () => {
    expect(problemsOf(record(noAddress))).toEqual([
      { field: 'ownerAddress', message: 'is required: ownerFiasId, or ownerRegion and ownerHouse' },
    ]);
  });

  it('names the missing half of a structured address', () => {
    expect(problemsOf(record({ ownerHouse: '' }))).toEqual([{ field: 'ownerHouse', message: 'is required without ownerFiasId' }]);
    expect(problemsOf(record({ ownerRegion: '' }))).toEqual([{ field: 'ownerRegion', message: 'is required without ownerFiasId' }]);
  });
});

describe('createDealValidator: joint ownership (owner2)', () => {
  it('gives two owners, the spouse validated and normalised like the owner', () => {
    const deal = dealOf(record(spouse));
    expect(deal.owners).toHaveLength(2);
    expect(deal.owners[1]).toMatchObject({
      surname: 'Кузнецова',
      gender: 'female',
      snils: '14627250961',
      doc: { series: '5008', number: '220344', issueDate: '2008-03-11' },
      address: { kind: 'fias', fiasId: FIAS_ID },
    });
  });

  it('validates owner2 as soon as one owner2 field is filled, naming owner2 fields', () => {
    const problems = problemsOf(record({ owner2Surname: 'Кузнецова' }));
    expect(problems.every((p) => p.field.startsWith('owner2'))).toBe(true);
    expect(problems).toContainEqual({ field: 'owner2Snils', message: 'is required' });
    expect(problems).toContainEqual({ field: 'owner2Address', message: 'is required: owner2FiasId, or owner2Region and owner2House' });
  });

  it('applies the owner rules to owner2 (checksum, dates)', () => {
    expect(problemsOf(record({ ...spouse, owner2Snils: '146-272-509 60', owner2DocIssueDate: '1987-01-01' }))).toEqual([
      { field: 'owner2Snils', message: 'checksum does not match' },
      { field: 'owner2DocIssueDate', message: 'must not be before owner2BirthDate' },
    ]);
  });

  it('keeps a single owner when every owner2 field is empty', () => {
    expect(dealOf(record({ owner2Surname: '', owner2Snils: ' ' })).owners).toHaveLength(1);
  });
});

describe('createDealValidator: the mortgage agreement', () => {
  it('refuses an agreementContentId that is not a UUID', () => {
    expect(problemsOf(record({ agreementContentId: 'b35ecbab' }))).toEqual([{ field: 'agreementContentId', message: 'must be a UUID' }]);
  });

  it.each([
    [`${SIGNATURE_1}|${SIGNATURE_2}`, 'a pipe'],
    [`${SIGNATURE_1}, ${SIGNATURE_2}`, 'a comma'],
    [`${SIGNATURE_1}  ${SIGNATURE_2}`, 'spaces'],
    [` ${SIGNATURE_1} |\n${SIGNATURE_2}| `, 'mixed separators'],
  ])('splits signature ids separated by %s (%s)', (value) => {
    expect(dealOf(record({ agreementSignatureIds: value })).agreement!.signatureIds).toEqual([SIGNATURE_1, SIGNATURE_2]);
  });

  it('has no signatures when agreementSignatureIds is empty', () => {
    expect(dealOf(record({ agreementSignatureIds: '' })).agreement!.signatureIds).toEqual([]);
  });

  it('refuses signature ids of which one is not a UUID', () => {
    expect(problemsOf(record({ agreementSignatureIds: `${SIGNATURE_1}|d42a9a44` }))).toEqual([
      { field: 'agreementSignatureIds', message: 'must be UUIDs separated by |, comma or space' },
    ]);
  });

  it('defaults the file type to pdf, accepts xml, refuses others', () => {
    expect(dealOf(record()).agreement!.fileType).toBe('pdf');
    expect(dealOf(record({ agreementFileType: 'XML' })).agreement!.fileType).toBe('xml');
    expect(problemsOf(record({ agreementFileType: 'docx' }))).toEqual([
      { field: 'agreementFileType', message: 'is "docx", not one of the accepted values: pdf; xml' },
    ]);
  });

  it('takes the agreement and its signatures by file path instead of content ids', () => {
    const deal = dealOf(
      record({
        agreementContentId: '',
        agreementSignatureIds: '',
        agreementFile: 'docs/a 1.pdf',
        agreementSignatureFiles: 'docs/a.sig | b.p7s',
      }),
    );
    expect(deal.agreement).toEqual({
      signatureIds: [],
      fileType: 'pdf',
      file: { path: 'docs/a 1.pdf' },
      signatureFiles: [{ path: 'docs/a.sig' }, { path: 'b.p7s' }],
    });
  });

  it('refuses a row naming both content ids and files, and signature files without an agreement file', () => {
    expect(problemsOf(record({ agreementFile: 'a.pdf' }))).toEqual([
      { field: 'agreementContentId', message: 'must be empty when agreementFile is given: a row names content ids or files, not both' },
      { field: 'agreementSignatureIds', message: 'must be empty when agreementFile is given: a row names content ids or files, not both' },
    ]);
    expect(problemsOf(record({ agreementSignatureFiles: 'a.sig' }))).toEqual([
      { field: 'agreementFile', message: 'is required with agreementSignatureFiles' },
    ]);
  });
});

describe('createDealValidator: problems', () => {
  it('reports every problem of a record, one entry each', () => {
    expect(problemsOf(record({ ownerSnils: '112-233-445 96', ownerBirthPlace: '', ownerDocIssueDate: '31.02.2015' }))).toEqual([
      { field: 'ownerBirthPlace', message: 'is required' },
      { field: 'ownerSnils', message: 'checksum does not match' },
      { field: 'ownerDocIssueDate', message: 'must be a real date (YYYY-MM-DD or DD.MM.YYYY)' },
    ]);
  });

  it('never puts a field’s value into a message (but a property enumeration’s unknown word)', () => {
    const bad: Record<string, string> = {
      dealId: `MSK-${'9'.repeat(100)}`,
      cadastralNumber: '77:06:55',
      areaValue: 'сорок пять',
      ownerSurname: 'Иванов'.repeat(100),
      ownerSnils: '112-233-445 96',
      owner2Snils: '462398405',
      ownerGender: 'Мужиков',
      ownerDocType: 'Паспортов',
      ownerBirthDate: '31.04.1986',
      ownerDocSeries: '50 0',
      ownerDocNumber: '10423X',
      ownerDocIssuerCode: '5400011',
      ownerFiasId: 'not-a-fias-id',
      agreementContentId: 'content-17',
      agreementSignatureIds: 'sig-a|sig-b',
    };
    const problems = problemsOf(record(bad));
    expect(problems.length).toBeGreaterThanOrEqual(Object.keys(bad).length);
    const text = problems.map((p) => p.message).join('\n');
    expect(text).not.toContain('Иванов');
    expect(text).not.toContain('445');
    expect(text).not.toContain('462398405');
    for (const value of Object.values(bad)) expect(text).not.toContain(value);
  });

  it('refuses a repeated dealId, naming the 1-based row of its first occurrence: for another property, the deal needs its own dealId', () => {
    const validateRow = createDealValidator({ today: TODAY });
    expect(validateRow(record({ dealId: 'A-1' })).ok).toBe(true);
    expect(validateRow(record({ dealId: 'A-2', apartment: '82' })).ok).toBe(true);
    expect(validateRow(record({ dealId: ' A-1 ', apartment: '83' }))).toEqual({
      ok: false,
      problems: [{ field: 'dealId', message: 'repeats the dealId of row 1', kind: 'dealIdConflict' }],
    });
    // The dealId's problem stands first, where the dealId's own would.
    expect(validateRow(record({ dealId: 'A-2', ownerSnils: '', cadastralNumber: '54:35:012345:222' }))).toEqual({
      ok: false,
      problems: [
        { field: 'dealId', message: 'repeats the dealId of row 2', kind: 'dealIdConflict' },
        { field: 'ownerSnils', message: 'is required' },
      ],
    });
  });

  it('tells a row repeated (the same dealId, the same property) from another property under one dealId', () => {
    const validateRow = createDealValidator({ today: TODAY });
    expect(validateRow(record({ dealId: 'C-1', cadastralNumber: '54:35:012345:101' })).ok).toBe(true);
    expect(validateRow(record({ dealId: 'C-2' })).ok).toBe(true);
    // The same cadastral number, the address written in another case and spacing: the same property.
    expect(validateRow(record({ dealId: 'C-1', cadastralNumber: '54:35:012345:101', city: 'новосибирск ' }))).toEqual({
      ok: false,
      problems: [{ field: 'dealId', message: 'repeats row 1: the same dealId for the same property', kind: 'duplicateRow' }],
    });
    // Two cadastral numbers: another property, whatever the address says.
    expect(validateRow(record({ dealId: 'C-1', cadastralNumber: '54:35:012345:222' }))).toMatchObject({
      ok: false,
      problems: [{ message: 'repeats the dealId of row 1, which is for another property', kind: 'dealIdConflict' }],
    });
    // No cadastral numbers: the address decides (ё and е, case, spaces are one).
    expect(validateRow(record({ dealId: 'C-2', street: '  ЧЕЛЮСКИНЦЕВ ' }))).toMatchObject({
      problems: [{ message: 'repeats row 2: the same dealId for the same property', kind: 'duplicateRow' }],
    });
    expect(validateRow(record({ dealId: 'C-2', apartment: '5' }))).toMatchObject({
      problems: [{ message: 'repeats the dealId of row 2', kind: 'dealIdConflict' }],
    });
  });

  it('counts an invalid first occurrence too, and a new validator starts afresh', () => {
    const validateRow = createDealValidator({ today: TODAY });
    expect(validateRow(record({ dealId: 'B-1', ownerSnils: '' })).ok).toBe(false);
    expect(validateRow(record({ dealId: 'B-1' }))).toMatchObject({
      ok: false,
      problems: [{ message: 'repeats row 1: the same dealId for the same property' }],
    });
    expect(createDealValidator({ today: TODAY })(record({ dealId: 'B-1' })).ok).toBe(true);
  });
});

describe('canonicalFieldName', () => {
  it('matches headers after trimming, case-insensitively, and knows every owner2 field', () => {
    expect(canonicalFieldName('  DEALID ')).toBe('dealId');
    expect(canonicalFieldName('owner2docissuedate')).toBe('owner2DocIssueDate');
    expect(canonicalFieldName('\uFEFFdealId')).toBe('dealId');
    expect(canonicalFieldName('Номер сделки')).toBeUndefined();
    expect(canonicalFieldName('errors')).toBeUndefined();
    expect(CANONICAL_FIELDS).toHaveLength(16 + 2 * 21 + 5);
    expect(new Set(CANONICAL_FIELDS.map((f) => f.toLowerCase())).size).toBe(CANONICAL_FIELDS.length);
  });
});

describe('samples/deals.csv', () => {
  const rows = parse(readFileSync(new URL('../../samples/deals.csv', import.meta.url), 'utf8'), { columns: true }) as Array<
    Record<string, string>
  >;
  const expected = readFileSync(new URL('../../samples/README.md', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => /^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|\s*([a-z_]+)\s*\|/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ row: Number(m[1]), dealId: m[2], outcome: m[3] }));

  it('has a README line per row, with the same dealIds', () => {
    expect(rows).toHaveLength(24);
    expect(expected.map((e) => e.row)).toEqual(rows.map((_, i) => i + 1));
    expect(expected.map((e) => e.dealId)).toEqual(rows.map((r) => r.dealId));
  });

  it('is invalid in exactly the rows the README marks invalid', () => {
    const validateRow = createDealValidator({ today: TODAY });
    const results = rows.map((row) => {
      const canonical: Record<string, string> = {};
      for (const [header, value] of Object.entries(row)) {
        const field = canonicalFieldName(header);
        if (field !== undefined) canonical[field] = value;
      }
      return validateRow(canonical);
    });
    const invalidRows = results.flatMap((r, i) => (r.ok ? [] : [i + 1]));
    expect(invalidRows).toEqual(expected.filter((e) => e.outcome === 'invalid').map((e) => e.row));
    expect(invalidRows).toHaveLength(3);

    // Each refused row is refused for the one reason (or two) its README line gives.
    const problems = Object.fromEntries(results.flatMap((r, i) => (r.ok ? [] : [[i + 1, r.problems.map((p) => p.field)]])));
    expect(
      Object.values(problems)
        .map((fields) => fields.length)
        .sort(),
    ).toEqual([1, 1, 2]);

    // Signatures decide queued (200) against suspended (201).
    for (const [i, r] of results.entries()) {
      const outcome = expected[i]?.outcome;
      if (!r.ok || (outcome !== 'queued' && outcome !== 'suspended')) continue;
      expect(r.deal.agreement!.signatureIds.length > 0, `row ${i + 1}`).toBe(outcome === 'queued');
    }
  });
});

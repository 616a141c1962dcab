import { describe, expect, it } from 'vitest';
import { lift } from '../../src/docflows/lift/index.js';
import { kindNamed } from '../../src/docflows/registry.js';
import type { LiftDeal } from '../../src/docflows/lift/fields.js';
import { parseProfile } from '../../src/input/profile.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import { parseRequestId, requestIdOf } from '../../src/ledger/entry.js';
import type { CessationOptions, DocflowRequest } from '../../src/domain/gateway.js';
import { readExample } from '../helpers/sandbox-http.js';

const example = readExample<DocflowRequest<CessationOptions>>('cessation-encumbrance-request.json');
const [encumbrancer] = example.options.whoUseRestriction.encumbrancer;

/** The published example's lift, as a bank's row would give it (the object by its cadastral number and address). */
const deal: LiftDeal = {
  dealId: 'lift-1',
  objectType: 'flat',
  cadastralNumber: '66:41:0704007:1391',
  region: 'Свердловская',
  city: 'Екатеринбург',
  street: 'Ленина',
  streetType: 'ул',
  house: '1',
  apartment: '81',
  apartmentType: 'кв',
  areaValue: '58',
  areaUnit: 'кв.м',
  owners: [
    {
      surname: 'Тестов',
      name: 'Виталий',
      patronymic: 'Иванович',
      birthDate: '1971-01-10',
      birthPlace: 'Иваново',
      snils: '000-000-000 55',
      gender: 'male',
      citizenship: 'Российская Федерация',
      doc: { type: 'russPassport', series: '1234', number: '123456', issueDate: '2017-01-01', issuerCode: '170-005', issuerName: 'МВД' },
      address: { kind: 'fias', fiasId: 'a6e699e0-c0c7-4126-88ca-88e6fbc98992', apartment: '81', apartmentType: 'кв' },
    },
  ],
  lift: { encumbranceType: 'mortgage', recordNumber: '2001-118586', recordDate: '2001-12-11', documents: [] },
};

/** The example's bank, its power of attorney by the content ids it names. */
function profileOfExample() {
  const { attorney, ...representative } = encumbrancer!.representative;
  const parsed = parseProfile({
    organization: encumbrancer!.organization,
    representative: {
      ...representative,
      attorney: {
        contentId: attorney!.appliedDocument.info.contentPointer.id,
        signatureIds: attorney!.appliedDocument.signatures!.map((s) => s.id),
      },
    },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.profile;
}

describe('the cessation_encumbrance_request a lift becomes', () => {
  it('is the published example for the equivalent row (the object by a structured address, the documents an empty list)', () => {
    const built = lift.buildRequest(deal, deal.cadastralNumber!, profileOfExample(), 'https://api.kontur.ru', example.requestId);
    // The example names the object by a FIAS id; a bank's row names it by its address parts.
    expect(built.options).toMatchObject({ object: { address: { region: 'Свердловская', house: { name: '1' } } } });
    const { object: builtObject, appliedDocuments, ...builtRest } = (built as DocflowRequest<CessationOptions>).options;
    const { object: exampleObject, ...exampleRest } = example.options;
    expect(appliedDocuments).toEqual({ other: [] });
    expect({ ...builtObject, address: undefined }).toEqual({ ...exampleObject, address: undefined });
    // The representative's passport in the example has `type: russPasport` beside documentType (docs: a quirk of the real service).
    const strip = (options: object) => JSON.parse(JSON.stringify(options).replace(/,"type":"russPasport"/g, '')) as unknown;
    expect(strip(builtRest)).toEqual(strip(exampleRest));
    expect(built.requestId).toBe(example.requestId);
  });

  it('sends the representative as the profile has it when it has no power of attorney, and each other document with its signatures', () => {
    const { attorney: _attorney, ...representative } = profileOfExample().representative;
    const profile = { ...profileOfExample(), representative: { ...representative, representativeType: 'authorized' } };
    const withDocs: LiftDeal = {
      ...deal,
      lift: {
        ...deal.lift!,
        encumbranceType: 'mortgageInLaw',
        documents: [
          { contentId: '11111111-2222-4333-8444-555555555555', signatureIds: ['21111111-2222-4333-8444-555555555555'], fileType: 'pdf' },
        ],
      },
    };
    const built = lift.buildRequest(withDocs, deal.cadastralNumber!, profile, 'https://host') as DocflowRequest<CessationOptions>;
    expect(built.options.encumbranceType).toBe('mortgageInLaw');
    expect(built.options.whoUseRestriction.encumbrancer[0]!.representative).not.toHaveProperty('attorney');
    expect(built.options.whoUseRestriction.encumbrancer[0]!.representative.representativeType).toBe('authorized');
    expect(built.options.appliedDocuments.other).toEqual([
      {
        documentType: 'other',
        content: {
          info: {
            type: 'pdf',
            contentPointer: {
              id: '11111111-2222-4333-8444-555555555555',
              contentLink: 'https://host/realty/v1/contents/11111111-2222-4333-8444-555555555555',
            },
          },
          signatures: [
            {
              id: '21111111-2222-4333-8444-555555555555',
              contentLink: 'https://host/realty/v1/contents/21111111-2222-4333-8444-555555555555',
            },
          ],
        },
      },
    ]);
    // A lift's requestId names its type: never the registration's entry of the same dealId.
    const id = built.requestId!;
    expect(parseRequestId(id)).toMatchObject({ type: 'cessation_encumbrance_request', dealId: 'lift-1', n: 0 });
    expect(id).not.toBe(requestIdOf(profile.organization.inn, 'lift-1'));
  });
});

describe("a lift's row", () => {
  const row = {
    dealId: 'L-1',
    cadastralNumber: '66:41:0704007:1391',
    region: 'Свердловская',
    city: 'Екатеринбург',
    street: 'Ленина',
    house: '1',
    apartment: '81',
    ownerSurname: 'Тестов',
    ownerName: 'Виталий',
    ownerBirthDate: '1971-01-10',
    ownerBirthPlace: 'Иваново',
    ownerSnils: '112-233-445 95',
    ownerGender: 'male',
    ownerDocSeries: '1234',
    ownerDocNumber: '123456',
    ownerDocIssueDate: '2017-01-01',
    ownerDocIssuerName: 'МВД',
    ownerFiasId: 'a6e699e0-c0c7-4126-88ca-88e6fbc98992',
    recordNumber: '2001-118586',
    recordDate: '11.12.2001',
  };
  const validate = (fields: Record<string, string>) => createDealValidator({ own: lift.own, today: new Date('2026-11-28') })(fields);

  it('reads the record of the mortgage, its date in either form, mortgage by default, and needs no agreement', () => {
    const result = validate(row);
    expect(result.ok && result.deal.lift).toEqual({
      encumbranceType: 'mortgage',
      recordNumber: '2001-118586',
      recordDate: '2001-12-11',
      documents: [],
    });
    expect(result.ok && result.deal.agreement).toBeUndefined();
  });

  it('names the row, the field and the problem for a missing record, a future date, an unknown type or a .sig named as a document', () => {
    const problems = (fields: Record<string, string>) => {
      const result = validate(fields);
      return result.ok ? [] : result.problems.map((p) => `${p.field}: ${p.message}`);
    };
    expect(problems({ ...row, recordNumber: '' })).toEqual(['recordNumber: is required']);
    expect(problems({ ...row, recordDate: '2030-01-01' })[0]).toMatch(/^recordDate: /);
    expect(problems({ ...row, encumbranceType: 'lease' })[0]).toMatch(/^encumbranceType: must be one of mortgage, mortgageInLaw/);
    expect(problems({ ...row, otherDocumentFiles: 'a.pdf|a.pdf.sig' })[0]).toMatch(/^otherDocumentFiles: names a signature \(2\)/);
  });

  it('takes other documents as paths between |, each to be checked with a .sig beside it', () => {
    const result = validate({ ...row, otherDocumentFiles: 'statement.pdf | letter, 2.pdf' });
    expect(result.ok && result.deal.lift!.documents.map((d) => [d.file?.path, d.signatureBeside])).toEqual([
      ['statement.pdf', true],
      ['letter, 2.pdf', true],
    ]);
  });

  it('is what --type lift and --type cessation_encumbrance_request name, and nothing else is', () => {
    expect(kindNamed('lift')).toBe(lift);
    expect(kindNamed('cessation_encumbrance_request')).toBe(lift);
    expect(kindNamed('registration')?.type).toBe('encumbrance_request');
    expect(kindNamed('mortgage')).toBeUndefined();
  });
});

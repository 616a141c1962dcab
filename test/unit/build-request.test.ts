import { describe, it, expect } from 'vitest';
import type { Deal } from '../../src/domain/deal.js';
import { parseProfile } from '../../src/input/profile.js';
import type { DocflowRequest, EncumbranceOptions } from '../../src/domain/gateway.js';
import { buildEncumbranceRequest } from '../../src/docflows/registration/request.js';
import { parseRequestId, requestIdOf } from '../../src/ledger/entry.js';
import { readExample } from '../helpers/sandbox-http.js';

const example = readExample<DocflowRequest<EncumbranceOptions>>('encumbrance-request.json');

/** The published example's deal, as a bank's row would give it. */
const deal: Deal = {
  dealId: 'client-request-12345',
  objectType: 'flat',
  cadastralNumber: '47:14:1203001:814',
  region: 'Новосибирская',
  city: 'Новосибирск',
  street: 'Челюскинцев',
  streetType: 'ул',
  house: '14',
  apartment: '81',
  apartmentType: 'кв',
  areaValue: '56',
  areaUnit: 'кв.м',
  owners: [
    {
      surname: 'Тестов',
      name: 'Тест',
      patronymic: 'Тестович',
      birthDate: '1990-01-01',
      birthPlace: 'Новосибирск',
      snils: '000-000-000 55',
      gender: 'male',
      citizenship: 'Российская федерация',
      doc: {
        type: 'russPassport',
        series: '1234',
        number: '123456',
        issueDate: '2001-01-01',
        issuerCode: '010-001',
        issuerName: 'МВД НСО',
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
  agreement: {
    contentId: 'b35ecbab-adde-488f-b01c-7133c90a261e',
    signatureIds: ['d42a9a44-4ebb-40dd-9396-bf33dee9f95b', 'd42a9a44-4ebb-40dd-9396-bf33dee9f95b'],
    fileType: 'pdf',
  },
};

function profileOfExample() {
  const [encumbrancer] = example.options.whoUseRestriction.encumbrancer;
  const parsed = parseProfile(encumbrancer);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.profile;
}

describe('the encumbrance_request a deal becomes', () => {
  it('is the published example for the equivalent deal (with the requestId the ledger gives it)', () => {
    const built = buildEncumbranceRequest(deal, deal.cadastralNumber!, profileOfExample(), 'https://api.kontur.ru', example.requestId);
    expect(built).toEqual(example);
  });

  it('uses cooperativeOwnership with spouse1 and spouse2 for two owners', () => {
    const spouse = { ...deal.owners[0]!, name: 'Тестина', gender: 'female' as const };
    const built = buildEncumbranceRequest(
      { ...deal, owners: [deal.owners[0]!, spouse] },
      '47:14:1203001:814',
      profileOfExample(),
      'https://host/',
    );
    expect(built.options.whoseRightRestricted).toEqual({
      cooperativeOwnership: {
        spouse1: { person: expect.objectContaining({ name: 'Тест' }) },
        spouse2: { person: expect.objectContaining({ name: 'Тестина' }) },
      },
    });
    expect(built.options.appliedDocuments.mortgageAgreement.content.info.contentPointer.contentLink).toBe(
      'https://host/realty/v1/contents/b35ecbab-adde-488f-b01c-7133c90a261e',
    );
  });

  it("names a settlement by its own type when the row's word gave one (пгт, рп, с, д), else п, and a city г", () => {
    const { city: _city, ...rest } = deal;
    const at = (d: Deal) => JSON.stringify(buildEncumbranceRequest(d, '47:14:1203001:814', profileOfExample(), 'https://host'));
    expect(at({ ...rest, settlement: 'Краснообск', settlementType: 'пгт' })).toContain('"city":{"name":"Краснообск","abbreviation":"пгт"}');
    expect(at({ ...rest, settlement: 'Кольцово', settlementType: 'рп' })).toContain('"city":{"name":"Кольцово","abbreviation":"рп"}');
    expect(at({ ...rest, settlement: 'Ивановка' })).toContain('"city":{"name":"Ивановка","abbreviation":"п"}');
    expect(at(deal)).toContain('"city":{"name":"Новосибирск","abbreviation":"г"}');
  });

  it('sends no signatures when the deal has none, so the gateway suspends it', () => {
    const built = buildEncumbranceRequest(
      { ...deal, agreement: { ...deal.agreement!, signatureIds: [] } },
      '47:14:1203001:814',
      profileOfExample(),
      'https://host',
    );
    expect(built.options.appliedDocuments.mortgageAgreement.content).not.toHaveProperty('signatures');
  });

  it('derives the requestId from the bank, the type and the deal alone, and a new one only for a resubmission number', () => {
    const inn = profileOfExample().organization.inn;
    expect(buildEncumbranceRequest(deal, '47:14:1203001:814', profileOfExample(), 'https://host').requestId).toBe(
      `${inn}:reg:0:client-request-12345`,
    );
    expect(requestIdOf(inn, deal.dealId, 2)).toBe(`${inn}:reg:2:client-request-12345`);
    // A lift of the same deal is another entry of the ledger, with another requestId.
    expect(requestIdOf(inn, deal.dealId, 0, 'cessation_encumbrance_request')).toBe(`${inn}:lift:0:client-request-12345`);
    expect(
      buildEncumbranceRequest(deal, '47:14:1203001:814', profileOfExample(), 'https://host', requestIdOf(inn, deal.dealId, 1)).requestId,
    ).toBe(`${inn}:reg:1:client-request-12345`);
  });

  it("reads back the bank, the type, the number and any dealId from a requestId of ours, and nothing from anyone else's", () => {
    expect(parseRequestId('7701234567:reg:0:A:1~x y')).toEqual({
      bank: '7701234567',
      type: 'encumbrance_request',
      n: 0,
      dealId: 'A:1~x y',
    });
    expect(parseRequestId('7701234567:lift:12:D')).toEqual({
      bank: '7701234567',
      type: 'cessation_encumbrance_request',
      n: 12,
      dealId: 'D',
    });
    expect(parseRequestId('client-request-12345')).toBeUndefined();
    // The form before the type was named, an unknown type code, a try that is no number.
    expect(parseRequestId('7701234567:12:D')).toBeUndefined();
    expect(parseRequestId('7701234567:zzz:0:D')).toBeUndefined();
    expect(parseRequestId('7701234567:reg:x:D')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import type { Deal } from '../../src/input/deal.js';
import { packDeal, unpackDeal } from '../../src/queue/deal-pack.js';
import { dealOf, storedJobData, withoutDeal, type DealJobData } from '../../src/queue/job-data.js';
import { maskJobData, MASK } from '../../src/dashboard/mask.js';

const owner = {
  surname: 'Тарасов',
  name: 'Виктор',
  patronymic: 'Олегович',
  birthDate: '1978-01-29',
  birthPlace: 'г. Тула',
  snils: '04866731698',
  gender: 'male' as const,
  citizenship: 'Российская Федерация',
  doc: { type: 'russPassport', series: '4523', number: '999404', issueDate: '2023-02-14', issuerCode: '770-097', issuerName: 'ГУ МВД' },
  address: { kind: 'structured' as const, region: 'Москва', street: 'Вавилова', streetType: 'ул', house: '81', apartment: '113' },
};
const deal: Deal = {
  dealId: 'MSK-1',
  objectType: 'flat',
  region: 'Москва',
  street: 'Вавилова',
  streetType: 'ул',
  house: '81',
  apartment: '113',
  apartmentType: 'кв',
  areaValue: '54.3',
  areaUnit: 'кв.м',
  owners: [owner, { ...owner, surname: 'Тарасова', address: { kind: 'fias', fiasId: '0c5b2444-70a0-4932-980c-b4dc0d3f02b5' } }],
  agreement: {
    contentId: 'a39aa45f-d79d-4dfa-bab5-6e6c738a8009',
    signatureIds: ['s1'],
    fileType: 'pdf',
    file: { path: 'a.pdf', size: 10, sha256: 'ab' },
  },
};

describe('a deal as a waiting job keeps it', () => {
  it('comes back whole, from a third fewer bytes or less, without a second dealId', () => {
    const packed = packDeal(deal);
    expect(unpackDeal(JSON.parse(JSON.stringify(packed)) as unknown[], 'MSK-1')).toEqual(deal);
    const json = JSON.stringify(packed);
    expect(json).not.toContain('MSK-1');
    expect(json).not.toContain('surname');
    expect(Buffer.byteLength(json)).toBeLessThan(Buffer.byteLength(JSON.stringify(deal)) * 0.7);
  });

  it('keeps a key it does not know as it is', () => {
    const later = { ...deal, mortgageRate: '7.5' } as Deal;
    const packed = packDeal(later);
    expect(packed.at(-1)).toEqual({ mortgageRate: '7.5' });
    expect(unpackDeal(JSON.parse(JSON.stringify(packed)) as unknown[], 'MSK-1')).toEqual(later);
  });

  it("skips the value of a key a later version added, never taking it for the deal's extra keys", () => {
    // Bit 1 is objectType; bit 50 a key this version does not have, whose value is an object.
    expect(unpackDeal([2 ** 1 + 2 ** 50, 'flat', { later: 1 }], 'MSK-1')).toEqual({ dealId: 'MSK-1', objectType: 'flat' });
    // Its keys past bit 31 read as well as the first 32 (sha256 is bit 44).
    expect(unpackDeal([2 ** 17, [2 ** 39, [2 ** 44, 'ab']]], 'MSK-1')).toEqual({ dealId: 'MSK-1', agreement: { file: { sha256: 'ab' } } });
  });

  it('tells a real array from an object, whatever its first item', () => {
    const odd = {
      ...deal,
      agreement: { ...deal.agreement, signatureIds: ['#', 'x'] },
      numbers: [1, 2],
      empty: [],
      nothing: {},
    } as unknown as Deal;
    expect(unpackDeal(JSON.parse(JSON.stringify(packDeal(odd))) as unknown[], 'MSK-1')).toEqual(odd);
  });

  it('is written packed, read packed or not (jobs of an earlier version), and leaves with the outcome either way', () => {
    const data: DealJobData = { batch: 'b', row: 3, dealId: 'MSK-1', deal };
    const stored = storedJobData(data);
    expect(stored).not.toHaveProperty('deal');
    expect(dealOf(stored)).toEqual(deal);
    expect(dealOf(data)).toBe(deal);
    expect(withoutDeal(stored)).toEqual({ batch: 'b', row: 3, dealId: 'MSK-1' });
    expect(withoutDeal(data)).toEqual({ batch: 'b', row: 3, dealId: 'MSK-1' });
  });

  it('is masked on the dashboard as the deal is', () => {
    const masked = maskJobData(JSON.parse(JSON.stringify(storedJobData({ batch: 'b', row: 3, dealId: 'MSK-1', deal }))) as unknown);
    expect(masked).toEqual(maskJobData({ batch: 'b', row: 3, dealId: 'MSK-1', deal }));
    expect(JSON.stringify(masked)).not.toContain('Тарасов');
    expect(JSON.stringify(masked)).toContain(MASK);
  });
});

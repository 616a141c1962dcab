import { describe, expect, it } from 'vitest';
import type { Deal } from '../../src/domain/deal.js';
import { compactText, fullText, packDealCompact, unpackDealCompact } from '../../src/queue/deal-pack.js';
import { dealJobId, dealOf, jobDataOf, jobIdParts, storedJobData, withoutDeal, type DealJobData } from '../../src/queue/job-data.js';
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
    file: { path: 'a.pdf', size: 10, sha256: 'ab', inode: 4_211_077, changedAtMs: 1_764_380_101_123.456 },
  },
};

describe('a deal as a waiting job keeps it', () => {
  it('comes back whole, from a third fewer bytes or less, without a second dealId', () => {
    const packed = packDealCompact(deal);
    expect(unpackDealCompact(JSON.parse(JSON.stringify(packed)) as unknown[], 'MSK-1')).toEqual(deal);
    const json = JSON.stringify(packed);
    expect(json).not.toContain('MSK-1');
    expect(json).not.toContain('surname');
    expect(json).not.toContain('changedAtMs');
    expect(Buffer.byteLength(json)).toBeLessThan(Buffer.byteLength(JSON.stringify(deal)) * 0.7);
  });

  it('keeps a key it does not know as it is', () => {
    const later = { ...deal, mortgageRate: '7.5' } as Deal;
    const packed = packDealCompact(later);
    expect(packed.at(-1)).toEqual({ mortgageRate: '7.5' });
    expect(unpackDealCompact(JSON.parse(JSON.stringify(packed)) as unknown[], 'MSK-1')).toEqual(later);
  });

  it("skips the value of a key a later version added, never taking it for the deal's extra keys", () => {
    // Bit 1 is objectType; bit 50 a key this version does not have, whose value is an object.
    expect(unpackDealCompact([2 ** 1 + 2 ** 50, 'flat', { later: 1 }], 'MSK-1')).toEqual({ dealId: 'MSK-1', objectType: 'flat' });
    // Its keys past bit 31 read as well as the first 32 (sha256 is bit 44).
    expect(unpackDealCompact([2 ** 17, [2 ** 39, [2 ** 44, 'ab']]], 'MSK-1')).toEqual({
      dealId: 'MSK-1',
      agreement: { file: { sha256: 'ab' } },
    });
  });

  it('tells a real array from an object, whatever its first item', () => {
    const odd = {
      ...deal,
      agreement: { ...deal.agreement, signatureIds: ['#', 'x'] },
      numbers: [1, 2],
      empty: [],
      nothing: {},
    } as unknown as Deal;
    expect(unpackDealCompact(JSON.parse(JSON.stringify(packDealCompact(odd))) as unknown[], 'MSK-1')).toEqual(odd);
  });

  it('is written packed, without the batch and dealId its id has, and leaves with the outcome', () => {
    const data: DealJobData = { batch: 'b', row: 3, dealId: 'MSK-1', deal };
    const stored = storedJobData(data);
    expect(Object.keys(stored)).toEqual(['row', 'c']);
    const read = jobDataOf(dealJobId('b', 'MSK-1'), JSON.parse(JSON.stringify(stored)) as DealJobData);
    expect(read).toMatchObject({ batch: 'b', row: 3, dealId: 'MSK-1' });
    expect(dealOf(read)).toEqual(deal);
    expect(dealOf(data)).toBe(deal);
    expect(withoutDeal(read)).toEqual({ batch: 'b', row: 3, dealId: 'MSK-1' });
    expect(withoutDeal(data)).toEqual({ batch: 'b', row: 3, dealId: 'MSK-1' });
    // What the worker writes back of a waiting job (a hold, a wait): the same form.
    expect(storedJobData({ ...read, holds: 1 })).toEqual({ row: 3, c: stored.c, holds: 1 });
  });

  it("takes a job's batch and dealId from its id, whatever the dealId holds and the batch's dots", () => {
    for (const [batch, dealId] of [
      ['b', 'MSK-1'],
      ['night.2026-11-25', 'СПБ/2026/№ 17'],
      ['a.b.c', 'x.y:z 😀'],
      ['b', '12345'],
    ] as const) {
      expect(jobIdParts(dealJobId(batch, dealId))).toEqual({ batch, dealId });
      expect(jobDataOf(dealJobId(batch, dealId), { row: 1 })).toEqual({ batch, row: 1, dealId });
    }
    expect(jobIdParts('nodot')).toBeUndefined();
    expect(() => jobDataOf('nodot', { row: 1 })).toThrow(/names no batch and dealId/);
  });

  it('is masked on the dashboard as the deal is, in each form a job may hold', () => {
    const full = maskJobData({ batch: 'b', row: 3, dealId: 'MSK-1', deal });
    const stored = maskJobData(JSON.parse(JSON.stringify(storedJobData({ batch: 'b', row: 3, dealId: 'MSK-1', deal }))) as unknown);
    const { dealId: _dealId, ...property } = (full as { deal: Record<string, unknown> }).deal;
    expect(stored).toEqual({ row: 3, deal: property });
    for (const masked of [full, stored]) {
      expect(JSON.stringify(masked)).not.toContain('Тарасов');
      expect(JSON.stringify(masked)).toContain(MASK);
    }
  });
});

/** A seeded generator of texts: Cyrillic, ASCII (LETTERS' punctuation and the backtick among it), Ё, №, astral characters. */
function texts(count: number, seed = 7): string[] {
  let x = seed;
  const next = () => ((x = (x * 1103515245 + 12345) % 2 ** 31), x / 2 ** 31);
  const pool = [
    ...'АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯабвгдежзийклмнопрстуфхцчшщъыьэюя',
    ...'ABCXYZabcxyz0123456789 .,-/"\\!$%&*+;<=>?@`#~_()[]{}|\'',
    ...['Ё', 'ё', '№', '«', '»', '\u0000', '\n', '😀', '\u040f', '\u0450'],
  ];
  return Array.from({ length: count }, () => {
    let t = '';
    const n = Math.floor(next() * 24);
    for (let i = 0; i < n; i++) t += pool[Math.floor(next() * pool.length)]!;
    return t;
  });
}

describe('a text as `c` keeps it', () => {
  it('comes back as it was, whatever it holds, and is never longer in UTF-8', () => {
    const all = [...texts(5000), '', '`', '``', '`x', '#', 'Москва', 'ул', 'A', 'Ж', '\u040f\u0450'];
    for (const text of all) {
      const stored = compactText(text);
      expect(fullText(JSON.parse(JSON.stringify(stored)) as string)).toBe(text);
      if (!text.startsWith('`')) expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(Buffer.byteLength(text));
    }
  });

  it('writes a Cyrillic letter as one byte, and what has none as it is', () => {
    expect(compactText('Москва')).toBe('`Morkca');
    expect(compactText('ГУ МВД России по г. Санкт-Петербургу')).toBe('`DT MCE Qorrii po d. Ranks-Pfsfqbtqdt');
    expect(compactText('Ёлкино, д. 5А')).toBe('`Ёlkino, e. 5A');
    expect(compactText('a39aa45f-d79d-4dfa-bab5-6e6c738a8009')).toBe('a39aa45f-d79d-4dfa-bab5-6e6c738a8009');
    // A letter saves a byte, the mark costs one: a single letter stays as it is.
    expect(compactText('Ж')).toBe('Ж');
    expect(compactText('`x')).toBe('````x');
    // Written by a version with these LETTERS: read the same for as long as such jobs wait.
    expect(fullText('`Morkca')).toBe('Москва');
    expect(fullText('`!$%&*+;<=>?@')).toBe('ЪЫЬЭЮЯъыьэюя');
  });

  it('makes the packed deal smaller still, and comes back whole', () => {
    const packed = packDealCompact(deal);
    expect(unpackDealCompact(JSON.parse(JSON.stringify(packed)) as unknown[], 'MSK-1')).toEqual(deal);
    const odd = { ...deal, street: '`Вавилова', note: { text: 'Примечание' }, list: ['#', 'Да'] } as unknown as Deal;
    expect(unpackDealCompact(JSON.parse(JSON.stringify(packDealCompact(odd))) as unknown[], 'MSK-1')).toEqual(odd);
    const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
    // Smaller than the positional form alone (under 0.7 of the deal's JSON, above): its Cyrillic one byte a letter.
    expect(bytes(packed)).toBeLessThan(bytes(deal) * 0.55);
  });
});

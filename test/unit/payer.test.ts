/** Who pays the state duty, as the payments file prints it: an organization as given, a person as initials. */
import { describe, expect, it } from 'vitest';
import { statusOfItem } from '../../src/feed/item-status.js';
import { maskPayer } from '../../src/privacy/payer.js';

describe('maskPayer', () => {
  it("prints an organization given as {name, inn} (the gateway's documented shape) with its name and INN as given", () => {
    expect(maskPayer({ name: 'АО «Банк Пример»', inn: '7701934587' })).toBe('АО «Банк Пример», INN 7701934587');
    expect(maskPayer({ name: 'ПАО Банк', inn: '7701934587' })).toBe('ПАО Банк, INN 7701934587');
    expect(maskPayer({ organization: { name: 'ООО Ромашка', inn: '7701234567' } })).toBe('ООО Ромашка, INN 7701234567');
  });

  it('takes a payer for an organization by its 10-digit INN, a KPP, an OGRN, its type, or a legal form or quotes in its name', () => {
    expect(maskPayer({ name: 'Банк Пример', inn: 7701934587 })).toBe('Банк Пример, INN 7701934587');
    expect(maskPayer({ name: 'Банк Пример', kpp: '770101001' })).toBe('Банк Пример');
    expect(maskPayer({ name: 'Банк Пример', ogrn: '1027700045174' })).toBe('Банк Пример');
    expect(maskPayer({ name: 'Банк Пример', type: 'Organization' })).toBe('Банк Пример');
    expect(maskPayer({ name: 'ООО Ромашка' })).toBe('ООО Ромашка');
    expect(maskPayer({ name: 'Банк «Пример»' })).toBe('Банк «Пример»');
    expect(maskPayer('АО «Банк Пример»')).toBe('АО «Банк Пример»');
  });

  it("keeps a person masked: initials, and a person's 12-digit INN dropped", () => {
    expect(maskPayer({ name: 'Петров Пётр Петрович', inn: '770123456789' })).toBe('П. П. П.');
    expect(maskPayer({ lastName: 'Петров', firstName: 'Пётр', inn: '7701234567' })).toBe('П. П.');
    expect(maskPayer({ person: { name: 'Петров Пётр', inn: '7701234567' } })).toBe('П. П.');
    expect(maskPayer('Петров Пётр Петрович')).toBe('П. П. П.');
    // A surname that reads like a legal form in other letters' case: a legal form is written in capitals.
    expect(maskPayer({ name: 'Ао Ли' })).toBe('А. Л.');
    expect(maskPayer(undefined)).toBeUndefined();
    expect(maskPayer({})).toBeUndefined();
  });

  it("keeps an organization payer of a news item in the docflow's state", () => {
    const status = statusOfItem(
      {
        docflowId: 'd-1',
        docflowType: 'encumbrance_request',
        state: 'suspended',
        requestId: 'r',
        requirements: { payment: [{ uin: '32100000000000000017', amount: 1000, payer: { name: 'ПАО Банк', inn: '7701934587' } }] },
      },
      '2026-11-25T00:00:00.000Z',
    );
    expect(status).toMatchObject({ requirement: 'payment', payer: 'ПАО Банк, INN 7701934587', paymentAmount: '1000' });
  });
});

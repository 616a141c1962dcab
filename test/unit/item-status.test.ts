/**
 * What a news item says of its docflow, in the fields a bank acts on, and nothing personal.
 */
import { describe, expect, it } from 'vitest';
import { maskPayer, maskRegistryText, registryErrorOf, statusOfItem } from '../../src/feed/item-status.js';
import { isRowFinal } from '../../src/domain/outcome.js';
import type { NewsDocflow } from '../../src/domain/gateway.js';

/** A docflow as the gateway might send it, shapes the schema would not let through included. */
const loose = (d: Record<string, unknown>): NewsDocflow => d as unknown as NewsDocflow;

const base = { docflowId: 'd-1', docflowType: 'encumbrance_request', requestId: '7701234567:0:D-1' };
const DATE = '2026-11-24T21:00:00.000Z';

describe('statusOfItem', () => {
  it('reads a payment requirement: uin, amount and a payer who is a person, as initials', () => {
    const status = statusOfItem(
      {
        ...base,
        state: 'suspended',
        requirements: { payment: [{ uin: '18810000000000000001', amount: 2000, payer: { lastName: 'Семёнов', firstName: 'Андрей' } }] },
      },
      DATE,
    );
    expect(status).toEqual({
      state: 'suspended',
      stateAt: DATE,
      requirement: 'payment',
      paymentUin: '18810000000000000001',
      paymentAmount: '2000',
      payer: 'С. А.',
    });
  });

  it('reads a signature requirement, in the list form too', () => {
    const requirements = [
      { signature: [{ person: { lastName: 'Иванова' }, files: [{ id: 'f1', contentLink: '/x', type: 'application' }] }] },
    ];
    expect(statusOfItem(loose({ ...base, state: 'suspended', requirements }), DATE)).toEqual({
      state: 'suspended',
      stateAt: DATE,
      requirement: 'signature',
    });
  });

  it('gives no requirement once the docflow is no longer suspended', () => {
    const status = statusOfItem({ ...base, state: 'sent', requirements: { payment: [{ uin: '1', amount: 1 }] } }, DATE);
    expect(status.requirement).toBeUndefined();
    expect(status.paymentUin).toBeUndefined();
  });

  it('reads a registry error as code: message, with what the registry echoed masked', () => {
    const status = statusOfItem(
      {
        ...base,
        state: 'error',
        error: {
          code: 'registryRefused',
          message: 'СЕМЕНОВ АНДРЕЙ: СНИЛС 123-456-789 64 не совпадает; объект 54:35:012345:101',
          errors: [{ message: 'паспорт 5010 123456' }],
        },
      },
      DATE,
    );
    expect(status.registryError).toBe('registryRefused: ***: СНИЛС *** не совпадает; объект 54:35:012345:101; паспорт ***');
    expect(status.registryError).not.toMatch(/СЕМЕНОВ|456|123456/);
  });

  it('counts the result files of a completed docflow', () => {
    const result = {
      files: [
        { id: 'r1', type: 'egrnExtract', contentLink: '/a' },
        { id: 'r2', type: 'signature', contentLink: '/b' },
      ],
    };
    expect(statusOfItem({ ...base, state: 'completed', result }, DATE).resultFiles).toBe(2);
  });

  it('accepts any missing or unexpected shape without throwing', () => {
    expect(statusOfItem(loose({ ...base, state: 'suspended', requirements: 'odd', error: null, result: [] }), DATE)).toEqual({
      state: 'suspended',
      stateAt: DATE,
    });
  });
});

describe('masking', () => {
  it('keeps an organisation payer by name and INN, a bare name as initials', () => {
    expect(maskPayer({ organization: { name: 'ООО Ромашка', inn: '7701234567' } })).toBe('ООО Ромашка, INN 7701234567');
    expect(maskPayer('Петров Пётр Петрович')).toBe('П. П. П.');
    expect(maskPayer(undefined)).toBeUndefined();
  });

  it('masks dates and long numbers but keeps cadastral numbers', () => {
    expect(maskRegistryText('дата рождения 02.01.1980, кадастровый 54:35:0123456:7')).toBe(
      'дата рождения ***, кадастровый 54:35:0123456:7',
    );
  });

  it('an Error object with a code only, or a message only', () => {
    expect(registryErrorOf({ code: 'x' })).toBe('x');
    expect(registryErrorOf({ message: 'нет' })).toBe('нет');
    expect(registryErrorOf({})).toBeUndefined();
  });
});

describe('isRowFinal', () => {
  it('a refused row is final, a submitted one only in completed or error, pending never', () => {
    expect(isRowFinal({ outcome: 'invalid' })).toBe(true);
    expect(isRowFinal({ outcome: 'queued' })).toBe(false);
    expect(isRowFinal({ outcome: 'queued', state: 'sent' })).toBe(false);
    expect(isRowFinal({ outcome: 'suspended', state: 'completed' })).toBe(true);
    expect(isRowFinal({ outcome: 'already_submitted', state: 'error' })).toBe(true);
    expect(isRowFinal({ outcome: 'pending' })).toBe(false);
  });
});

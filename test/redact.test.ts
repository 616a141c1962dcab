import { describe, it, expect } from 'vitest';
import { createDealValidator } from '../src/input/validate-deal.js';
import { maskPersonalData } from '../src/worker/redact.js';
import { HEADER, ROWS } from './helpers/fixtures.js';

const record = Object.fromEntries(HEADER.map((h, i) => [h, ROWS[0]![i] ?? '']));
const validated = createDealValidator()(record);
if (!validated.ok) throw new Error('the first sample row is valid');
const deal = validated.deal;
const owner = deal.owners[0];

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

  it('leaves the rest of the message alone', () => {
    expect(maskPersonalData('validation: is required @ options.object.cadastralNumber', deal)).toBe('validation: is required @ options.object.cadastralNumber');
  });
});

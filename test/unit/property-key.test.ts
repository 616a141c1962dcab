import { describe, expect, it } from 'vitest';
import { canonicalAddress, compareProperties, describeProperty, propertyKeyOf, storedProperty } from '../../src/input/property-key.js';

const FLAT = { region: 'Новосибирская область', city: 'Новосибирск', street: 'Челюскинцев', house: '14', apartment: '81' };

describe('the key of the property a deal is for', () => {
  it('writes the address lower-cased, ё as е, spaces collapsed, the empty parts left out', () => {
    expect(canonicalAddress(FLAT)).toBe('новосибирская область, новосибирск, челюскинцев, 14, 81');
    expect(canonicalAddress({ region: ' Москва ', street: 'Семёновская   наб.', house: '2', building: ' 1 ', structure: '3' })).toBe(
      'москва, семеновская наб., 2 корп 1 стр 3',
    );
    expect(canonicalAddress({ ...FLAT, city: 'НОВОСИБИРСК', street: 'челюскинцев ' })).toBe(canonicalAddress(FLAT));
  });

  it('is the cadastral number when the row has one (or suggest found one), and always the address', () => {
    expect(propertyKeyOf(FLAT)).toEqual({ address: 'новосибирская область, новосибирск, челюскинцев, 14, 81' });
    expect(propertyKeyOf({ ...FLAT, cadastralNumber: ' 54:35:012345:101 ' })).toMatchObject({ cadastralNumber: '54:35:012345:101' });
    expect(propertyKeyOf(FLAT, '54:35:012345:7')).toMatchObject({ cadastralNumber: '54:35:012345:7' });
    expect(propertyKeyOf({})).toEqual({});
  });

  it('calls two properties different only by two cadastral numbers, the same by one number or one address', () => {
    const a = propertyKeyOf({ ...FLAT, cadastralNumber: '54:35:012345:101' });
    expect(compareProperties(a, propertyKeyOf({ ...FLAT, cadastralNumber: '54:35:012345:222' }))).toBe('different');
    expect(compareProperties(a, propertyKeyOf({ ...FLAT, street: 'Ленина', cadastralNumber: '54:35:012345:101' }))).toBe('same');
    // One side without a number: equal addresses tell; unequal ones cannot (written another way?).
    expect(compareProperties(a, propertyKeyOf({ ...FLAT, city: 'новосибирск' }))).toBe('same');
    expect(compareProperties(a, propertyKeyOf({ ...FLAT, apartment: '82' }))).toBe('unknown');
    expect(compareProperties({}, propertyKeyOf(FLAT))).toBe('unknown');
  });

  it('names a property by its cadastral number, else its address', () => {
    expect(describeProperty(propertyKeyOf({ ...FLAT, cadastralNumber: '54:35:012345:101' }))).toBe('54:35:012345:101');
    expect(describeProperty(propertyKeyOf(FLAT))).toBe('новосибирская область, новосибирск, челюскинцев, 14, 81');
  });

  it('is kept in the ledger with the address as a digest that compares as the address does', () => {
    const key = propertyKeyOf({ ...FLAT, cadastralNumber: '54:35:012345:101' });
    const stored = storedProperty(key);
    expect(stored).toEqual({ cadastralNumber: '54:35:012345:101', address: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(storedProperty(propertyKeyOf({ ...FLAT, city: 'НОВОСИБИРСК' }))).toEqual({ address: stored.address });
    expect(compareProperties(stored, storedProperty(propertyKeyOf(FLAT)))).toBe('same');
    expect(compareProperties(stored, storedProperty(propertyKeyOf({ ...FLAT, apartment: '82' })))).toBe('unknown');
    expect(storedProperty({ cadastralNumber: '1:1:1:1' })).toEqual({ cadastralNumber: '1:1:1:1' });
  });

  it("makes a key's stored form once: the claim and the outcome of a run pass the same key", () => {
    const key = propertyKeyOf(FLAT, '54:35:012345:7');
    const stored = storedProperty(key);
    expect(storedProperty(key)).toBe(stored);
    // Another key of the same property is hashed again, and alike.
    expect(storedProperty(propertyKeyOf(FLAT, '54:35:012345:7'))).not.toBe(stored);
    expect(storedProperty(propertyKeyOf(FLAT, '54:35:012345:7'))).toEqual(stored);
    expect(key.address).toBe(canonicalAddress(FLAT));
  });
});

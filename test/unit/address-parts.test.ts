import { describe, it, expect } from 'vitest';
import { compactNumber, housePartNumber, numberKey, splitApartment, splitHouse } from '../../src/input/address-parts.js';

describe('splitApartment: an apartment cell as banks write it', () => {
  it('drops кв, кв., квартира and № before the number, in any case, glued or spaced', () => {
    for (const cell of ['кв. 33', 'кв.33', 'кв 33', 'КВ. 33', 'Кв33', 'квартира 33', 'Квартира №33', 'кв. № 33', ' кв.  33 ']) {
      expect(splitApartment(cell), cell).toEqual({ name: '33', type: 'кв' });
    }
  });

  it('keeps the type its word names: пом, ком, бокс', () => {
    expect(splitApartment('пом. 5')).toEqual({ name: '5', type: 'пом' });
    expect(splitApartment('помещение 1Н')).toEqual({ name: '1Н', type: 'пом' });
    expect(splitApartment('ком. 2')).toEqual({ name: '2', type: 'ком' });
    expect(splitApartment('комната 2')).toEqual({ name: '2', type: 'ком' });
    expect(splitApartment('бокс 17')).toEqual({ name: '17', type: 'бокс' });
  });

  it('leaves a bare number with no type, spaces out and letters upper-case', () => {
    expect(splitApartment('33')).toEqual({ name: '33' });
    expect(splitApartment(' 33 а ')).toEqual({ name: '33А' });
    expect(splitApartment('№ 33')).toEqual({ name: '33' });
  });

  it('does not take a word that merely starts like a type for one', () => {
    expect(splitApartment('квх')).toEqual({ name: 'КВХ' });
    expect(splitApartment('кв.')).toEqual({ name: '', type: 'кв' });
  });
});

describe('splitHouse: a house cell as banks write it', () => {
  it('drops д., д, дом and № before the number', () => {
    for (const cell of ['д. 39', 'д.39', 'д 39', 'Д39', 'дом 39', 'ДОМ №39', 'д. № 39', '39', ' 39 ', '39,']) {
      expect(splitHouse(cell), cell).toEqual({ house: '39' });
    }
  });

  it('keeps 39/1 one number, its spaces out', () => {
    expect(splitHouse('39/1')).toEqual({ house: '39/1' });
    expect(splitHouse('д. 39 / 1')).toEqual({ house: '39/1' });
    expect(splitHouse('15 а')).toEqual({ house: '15А' });
  });

  it('takes корпус, строение and литера out of the cell', () => {
    expect(splitHouse('39 корп. 1')).toEqual({ house: '39', building: '1' });
    expect(splitHouse('д. 39, корпус 1')).toEqual({ house: '39', building: '1' });
    expect(splitHouse('39к1')).toEqual({ house: '39', building: '1' });
    expect(splitHouse('39 к. 2 стр. 3')).toEqual({ house: '39', building: '2', structure: '3' });
    expect(splitHouse('дом 39 строение 3')).toEqual({ house: '39', structure: '3' });
    expect(splitHouse('39 лит. А')).toEqual({ house: '39', structure: 'А' });
  });

  it('reads a letter after the number as part of it, never as a word', () => {
    expect(splitHouse('15к')).toEqual({ house: '15К' });
    expect(splitHouse('15д')).toEqual({ house: '15Д' });
    expect(splitHouse('39 д 1')).toEqual({ house: '39Д1' });
  });

  it('refuses a cell with no house number, or a part named twice', () => {
    expect(splitHouse('корп. 1')).toBe('must start with the house number');
    expect(splitHouse('39 к1 к2')).toBe('names the building twice');
  });
});

describe('the other house parts and the comparison form', () => {
  it('reads a building or structure cell with or without its word', () => {
    expect(housePartNumber('корп. 2')).toBe('2');
    expect(housePartNumber('к2')).toBe('2');
    expect(housePartNumber('стр 1')).toBe('1');
    expect(housePartNumber(' 2 ')).toBe('2');
  });

  it('compares numbers without case, spaces, edge punctuation or ё', () => {
    expect(compactNumber(' 15 а. ')).toBe('15А');
    expect(numberKey('15а')).toBe(numberKey('15 А'));
    expect(numberKey('3ё')).toBe(numberKey('3Е'));
    expect(numberKey(undefined)).toBe('');
    expect(numberKey('39')).not.toBe(numberKey('39/1'));
  });
});

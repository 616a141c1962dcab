import { describe, expect, it } from 'vitest';
import { splitAddressLine } from '../../src/input/address-line.js';
import { districtName, regionName, splitSettlement, splitStreet, streetTypeName } from '../../src/input/address-levels.js';
import { createDealValidator } from '../../src/input/validate-deal.js';
import { stripStreetType } from '../../src/sandbox/suggest.js';

describe('a street as people write it', () => {
  it.each([
    ['ул. Ленина', 'Ленина', 'ул'],
    ['ул.Ленина', 'Ленина', 'ул'],
    ['ул Ленина', 'Ленина', 'ул'],
    ['Ленина ул', 'Ленина', 'ул'],
    ['Ленина ул.', 'Ленина', 'ул'],
    ['УЛ. ЛЕНИНА', 'ЛЕНИНА', 'ул'],
    ['улица Ленина', 'Ленина', 'ул'],
    ['Улица Татьяны Снежиной', 'Татьяны Снежиной', 'ул'],
    ['Хорошёвское ш.', 'Хорошёвское', 'ш'],
    ['Хорошевское шоссе', 'Хорошевское', 'ш'],
    ['ш. Энтузиастов', 'Энтузиастов', 'ш'],
    ['пр-т Мира', 'Мира', 'пр-кт'],
    ['пр-кт Просвещения', 'Просвещения', 'пр-кт'],
    ['просп. Ленинский', 'Ленинский', 'пр-кт'],
    ['Красный проспект', 'Красный', 'пр-кт'],
    ['Невский пр.', 'Невский', 'пр-кт'],
    ['пер. Кривоколенный', 'Кривоколенный', 'пер'],
    ['Кривоколенный переулок', 'Кривоколенный', 'пер'],
    ['б-р Гоголевский', 'Гоголевский', 'б-р'],
    ['Гоголевский бульвар', 'Гоголевский', 'б-р'],
    ['наб. реки Фонтанки', 'реки Фонтанки', 'наб'],
    ['Университетская набережная', 'Университетская', 'наб'],
    ['пл. Революции', 'Революции', 'пл'],
    ['Площадь Ленина', 'Ленина', 'пл'],
    ['проезд Серебрякова', 'Серебрякова', 'проезд'],
    ['Лихов пр-д', 'Лихов', 'проезд'],
    ['туп. Заводской', 'Заводской', 'туп'],
    ['Заводской тупик', 'Заводской', 'туп'],
    ['мкр. Северный', 'Северный', 'мкр'],
    ['микрорайон Академгородок', 'Академгородок', 'мкр'],
    ['Челюскинцев', 'Челюскинцев', undefined],
    // A street named by a type word alone keeps its name.
    ['Набережная', 'Набережная', undefined],
    // A word that only starts like a type word is part of the name.
    ['Шоссейная', 'Шоссейная', undefined],
    ['Плеханова', 'Плеханова', undefined],
  ])('%s is %s, %s', (text, name, abbreviation) => {
    expect(splitStreet(text)).toEqual(abbreviation === undefined ? { name } : { name, abbreviation });
  });

  it.each([
    ['улица', 'ул'],
    ['Ш.', 'ш'],
    ['проспект', 'пр-кт'],
    ['аллея', 'аллея'],
  ])('a street type column of %s is %s', (word, abbreviation) => {
    expect(streetTypeName(word)).toBe(abbreviation);
  });
});

describe('a settlement as people write it', () => {
  it.each([
    ['г. Новосибирск', 'Новосибирск', 'г'],
    ['г.Новосибирск', 'Новосибирск', 'г'],
    ['Новосибирск г', 'Новосибирск', 'г'],
    ['город Бердск', 'Бердск', 'г'],
    ['пгт Краснообск', 'Краснообск', 'пгт'],
    ['посёлок городского типа Краснообск', 'Краснообск', 'пгт'],
    ['рп. Кольцово', 'Кольцово', 'рп'],
    ['р.п. Кольцово', 'Кольцово', 'рп'],
    ['Кольцово рп', 'Кольцово', 'рп'],
    ['с. Раздольное', 'Раздольное', 'с'],
    ['село Раздольное', 'Раздольное', 'с'],
    ['д. Ивановка', 'Ивановка', 'д'],
    ['деревня Ивановка', 'Ивановка', 'д'],
    ['п. Восход', 'Восход', 'п'],
    ['пос. Восход', 'Восход', 'п'],
    ['Посёлок Восход', 'Восход', 'п'],
    ['Горно-Алтайск', 'Горно-Алтайск', undefined],
  ])('%s is %s, %s', (text, name, abbreviation) => {
    expect(splitSettlement(text)).toEqual(abbreviation === undefined ? { name } : { name, abbreviation });
  });
});

describe('a region and a district as people write them, as the register writes them', () => {
  it.each([
    ['Новосибирская обл.', 'Новосибирская область'],
    ['Новосибирская обл', 'Новосибирская область'],
    ['обл. Новосибирская', 'Новосибирская область'],
    ['Новосибирская область', 'Новосибирская область'],
    ['Свердловская Обл.', 'Свердловская область'],
    ['Респ. Татарстан', 'Республика Татарстан'],
    ['Татарстан Респ', 'Республика Татарстан'],
    ['республика Татарстан', 'Республика Татарстан'],
    ['Чувашская респ.', 'Чувашская Республика'],
    ['Краснодарский кр.', 'Краснодарский край'],
    ['Краснодарский край', 'Краснодарский край'],
    ['Ханты-Мансийский АО', 'Ханты-Мансийский автономный округ'],
    ['Ямало-Ненецкий авт. округ', 'Ямало-Ненецкий автономный округ'],
    ['Еврейская АОбл', 'Еврейская автономная область'],
    ['г. Москва', 'Москва'],
    ['Москва г', 'Москва'],
    ['Санкт-Петербург', 'Санкт-Петербург'],
  ])('%s is %s', (text, name) => {
    expect(regionName(text)).toBe(name);
  });

  it.each([
    ['Новосибирский р-н', 'Новосибирский район'],
    ['р-н Новосибирский', 'Новосибирский район'],
    ['Новосибирский район', 'Новосибирский район'],
  ])('%s is %s', (text, name) => {
    expect(districtName(text)).toBe(name);
  });
});

describe('one combined address cell', () => {
  it('splits region, settlement, street, house, building and apartment', () => {
    expect(splitAddressLine('Новосибирская обл., г. Новосибирск, ул. Ленина, д. 5, корп. 2, кв. 9')).toEqual({
      region: 'Новосибирская обл.',
      city: 'г. Новосибирск',
      street: 'ул. Ленина',
      house: 'д. 5',
      building: 'корп. 2',
      apartment: 'кв. 9',
    });
  });

  it('skips a postal index and the country, takes a federal city as the region, and bare numbers as house and flat', () => {
    expect(splitAddressLine('123007, Россия, г. Москва, Хорошёвское ш., 38, 12')).toEqual({
      region: 'Москва',
      street: 'Хорошёвское ш.',
      house: '38',
      apartment: '12',
    });
  });

  it('reads a district and a settlement, and a region and a city without their words by their place', () => {
    expect(splitAddressLine('Новосибирская область, Новосибирский р-н, рп. Краснообск, д. 7, стр. 1')).toEqual({
      region: 'Новосибирская область',
      district: 'Новосибирский р-н',
      settlement: 'рп. Краснообск',
      house: 'д. 7',
      structure: 'стр. 1',
    });
    expect(splitAddressLine('Республика Татарстан, Казань, ул. Баумана, 15/2, кв 7')).toMatchObject({
      region: 'Республика Татарстан',
      city: 'Казань',
    });
  });

  it('names the problem of an address it cannot split, by the part’s place, never its text', () => {
    expect(splitAddressLine('Новосибирская обл., г. Новосибирск, ул. Ленина')).toBe('names no house (д. 5)');
    expect(splitAddressLine('г. Новосибирск, г. Бердск, д. 5')).toBe('names the city twice');
    expect(splitAddressLine('Новосибирская обл., г. Новосибирск, ул. Ленина, д. 5, Секретная')).toBe(
      'has a fifth part that names no level it knows',
    );
  });
});

describe('the loader gives the contract a name and its abbreviation apart', () => {
  const base = {
    dealId: 'A-1',
    house: '5',
    ownerSurname: 'Кузнецов',
    ownerName: 'Андрей',
    ownerBirthDate: '1986-04-12',
    ownerBirthPlace: 'г. Новосибирск',
    ownerSnils: '112-233-445 95',
    ownerGender: 'жен.',
    ownerDocSeries: '5006',
    ownerDocNumber: '104232',
    ownerDocIssueDate: '2006-05-03',
    ownerDocIssuerName: 'ГУ МВД',
    ownerRegion: 'Новосибирская обл.',
    ownerCity: 'г. Новосибирск',
    ownerStreet: 'ул. Ленина',
    ownerHouse: '5',
    agreementContentId: 'b35ecbab-adde-488f-b01c-7133c90a261e',
  };
  const validate = (fields: Record<string, string>) => createDealValidator({ today: new Date(2026, 10, 21) })({ ...base, ...fields });

  it('never sends "ул ул. Ленина", and files Хорошёвское ш. as a шоссе', () => {
    const lenina = validate({ region: 'Новосибирская обл.', city: 'г. Новосибирск', street: 'ул. Ленина' });
    expect(lenina).toMatchObject({
      ok: true,
      deal: { region: 'Новосибирская область', city: 'Новосибирск', street: 'Ленина', streetType: 'ул' },
    });
    expect(lenina.ok && lenina.deal.owners[0]!.address).toMatchObject({
      region: 'Новосибирская область',
      city: 'Новосибирск',
      street: 'Ленина',
      streetType: 'ул',
    });
    expect(validate({ region: 'г. Москва', city: 'Москва', street: 'Хорошёвское ш.' })).toMatchObject({
      ok: true,
      deal: { region: 'Москва', street: 'Хорошёвское', streetType: 'ш' },
    });
  });

  it('moves a settlement written in the city column to settlement, and a city in the settlement column to city', () => {
    const краснообск = validate({ region: 'Новосибирская область', district: 'Новосибирский р-н', city: 'рп. Краснообск' });
    expect(краснообск.ok && краснообск.deal).toMatchObject({
      district: 'Новосибирский район',
      settlement: 'Краснообск',
      settlementType: 'рп',
    });
    expect(краснообск.ok && краснообск.deal.city).toBeUndefined();
    const бердск = validate({ region: 'Новосибирская область', settlement: 'г. Бердск' });
    expect(бердск.ok && бердск.deal).toMatchObject({ city: 'Бердск' });
  });

  it('refuses a street whose word names a type other than the streetType column', () => {
    expect(validate({ region: 'Москва', street: 'Хорошёвское ш.', streetType: 'ул' })).toEqual({
      ok: false,
      problems: [{ field: 'street', message: 'names a street type other than streetType' }],
    });
    expect(validate({ region: 'Москва', street: 'Хорошёвское ш.', streetType: 'шоссе' })).toMatchObject({ ok: true });
  });

  it('reads a combined address, and names its problem under address', () => {
    const { house: _house, ...noHouse } = base;
    const line = createDealValidator({ today: new Date(2026, 10, 21) })({
      ...noHouse,
      address: 'Новосибирская обл., г. Новосибирск, ул. Ленина, д. 5, корп. 2, кв. 9',
    });
    expect(line).toMatchObject({
      ok: true,
      deal: {
        region: 'Новосибирская область',
        city: 'Новосибирск',
        street: 'Ленина',
        streetType: 'ул',
        house: '5',
        building: '2',
        apartment: '9',
      },
    });
    const broken = createDealValidator({ today: new Date(2026, 10, 21) })({ ...noHouse, address: 'Новосибирская обл., ул. Ленина' });
    expect(broken.ok || broken.problems).toEqual([
      { field: 'address', message: 'names no house (д. 5)' },
      { field: 'region', message: 'is required' },
      { field: 'house', message: 'is required' },
    ]);
  });
});

describe('the sandbox strips the same street words', () => {
  it.each([
    ['ул. Ленина', 'ленина'],
    ['пр-т Мира', 'мира'],
    ['Лихов пр-д', 'лихов'],
    ['мкр.Северный', 'северный'],
    ['Набережная', 'набережная'],
  ])('%s as %s', (text, name) => {
    expect(stripStreetType(text)).toBe(name);
  });
});

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { applyDefaults, parseMapping, resolveHeader } from '../../src/input/mapping.js';
import { parseReading, serializeReading } from '../../src/input/reading-options.js';
import { createDealValidator } from '../../src/input/validate-deal.js';

const ROW = {
  dealId: 'A-1',
  region: 'Москва',
  house: '5',
  ownerSurname: 'Смирнова',
  ownerName: 'Ольга',
  ownerBirthDate: '1991-09-23',
  ownerBirthPlace: 'г. Москва',
  ownerSnils: '112-233-445 95',
  ownerGender: 'female',
  ownerDocSeries: '4511',
  ownerDocNumber: '468173',
  ownerDocIssueDate: '2011-10-14',
  ownerDocIssuerName: 'ГУ МВД',
  ownerRegion: 'Москва',
  ownerHouse: '5',
  agreementContentId: 'b35ecbab-adde-488f-b01c-7133c90a261e',
};
const validate = (fields: Record<string, string>) => createDealValidator({ today: new Date(2026, 10, 21) })({ ...ROW, ...fields });

describe('built-in Russian spellings of the enumerations', () => {
  it.each([
    ['objectType', 'Квартира', 'flat'],
    ['objectType', 'комната', 'room'],
    ['objectType', 'Земельный участок', 'landPlot'],
    ['objectType', 'ОНС', 'unfinishedObject'],
    ['objectType', 'Объект незавершённого строительства', 'unfinishedObject'],
    ['ownerGender', 'жен.', 'female'],
    ['ownerGender', 'Женский', 'female'],
    ['ownerGender', 'Ж', 'female'],
    ['ownerGender', 'муж.', 'male'],
    ['ownerGender', 'Мужской', 'male'],
    ['ownerDocType', 'Паспорт гражданина РФ', 'russPassport'],
    ['ownerDocType', 'паспорт', 'russPassport'],
    ['apartmentType', 'Квартира', 'кв'],
    ['apartmentType', 'Нежилое помещение', 'пом'],
    ['areaUnit', 'кв. м.', 'кв.м'],
    ['areaUnit', 'м²', 'кв.м'],
    ['areaUnit', 'Гектар', 'га'],
  ])('%s %s is %s', (field, word, value) => {
    const result = validate({ [field]: word });
    expect(result.ok).toBe(true);
    const deal = result.ok ? result.deal : undefined;
    const read: Record<string, unknown> = {
      objectType: deal?.objectType,
      ownerGender: deal?.owners[0]!.gender,
      ownerDocType: deal?.owners[0]!.doc.type,
      apartmentType: deal?.apartmentType,
      areaUnit: deal?.areaUnit,
    };
    expect(read[field]).toBe(value);
  });
});

describe('"values" in the mapping file', () => {
  const mapping = parseMapping(
    {
      columns: { 'Вид объекта': 'objectType', Пол: 'ownerGender' },
      values: { objectType: { 'Жилое помещение': 'flat', Квартира: 'room' }, ownerGender: { Дама: 'female' } },
    },
    'map.json',
  );
  const mapped = (fields: Record<string, string>): Record<string, string> => {
    const copy = { ...fields };
    applyDefaults(copy, mapping);
    return copy;
  };

  it('puts our value for their word, any case, and a word mapped there wins over the built-in one', () => {
    expect(mapped({ objectType: 'жилое помещение' }).objectType).toBe('flat');
    expect(mapped({ objectType: 'КВАРТИРА' }).objectType).toBe('room');
    expect(mapped({ objectType: 'дом' }).objectType).toBe('дом');
    expect(validate(mapped({ objectType: 'Квартира' }))).toMatchObject({ ok: true, deal: { objectType: 'room' } });
  });

  it('gives an owner field’s words to the spouse’s field too', () => {
    expect(mapped({ ownerGender: 'дама', owner2Gender: 'Дама' })).toMatchObject({ ownerGender: 'female', owner2Gender: 'female' });
  });

  it('leaves an unknown value to the validator, which names the field, the value and the accepted words', () => {
    expect(validate(mapped({ objectType: 'Дача' }))).toEqual({
      ok: false,
      problems: [
        {
          field: 'objectType',
          message: expect.stringMatching(/^is "Дача", not one of the accepted values: flat \(квартира, кв\); room/) as string,
        },
      ],
    });
  });

  it('refuses a mapping whose value is not one of the field’s, or whose field is unknown', () => {
    expect(() => parseMapping({ values: { objectType: { Дача: 'dacha' } } }, 'map.json')).toThrow(
      new ConfigError(
        'The mapping map.json is not valid: values.objectType.Дача: "dacha" is not one of flat, room, landPlot, structure, unfinishedObject.',
      ),
    );
    expect(() => parseMapping({ values: { colour: { a: 'b' } } }, 'map.json')).toThrow(/values\.colour: not a deal field/);
  });

  it('is kept with the batch’s reading, and a mapping without values keeps the reading it had', () => {
    const again = parseReading(serializeReading({ mapping }));
    expect(again.mapping?.values?.get('objectType')?.get('жилое помещение')).toBe('flat');
    const plain = parseMapping({ columns: { Адрес: 'region' } }, 'map.json');
    expect(serializeReading({ mapping: plain })).toBe(
      '{"format":null,"encoding":null,"delimiter":null,"mapping":{"columns":[["адрес","region"]],"defaults":{}}}',
    );
  });
});

describe('"address" in the mapping file', () => {
  it('reads the named column as the combined address', () => {
    const mapping = parseMapping({ address: 'Адрес объекта' }, 'map.json');
    expect(resolveHeader(' адрес объекта ', mapping)).toBe('address');
    expect(resolveHeader('Адрес', parseMapping({ columns: { Адрес: 'address' } }, 'map.json'))).toBe('address');
  });
});

#!/usr/bin/env python3
"""Writes samples/deals.csv, samples/registry.json, samples/bank-profile.json and
samples/README.md: the demo's input, the sandbox register it runs against, and the
outcome every row must end with.

All people, ids and numbers are fictional; SNILS, INN and OGRN carry valid check
digits (computed here) unless a row is meant to fail. The script also checks its
own promises: every row meant to go through suggest finds exactly the number of
equal candidates its outcome needs, by the rules of the sandbox and the worker.

    python3 scripts/gen-samples.py      # from the project root; deterministic
"""
import csv
import io
import json
import random
import re
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / 'samples'
rng = random.Random(20261121)

# ---- check digits (the same rules as src/input/checksums.ts) ----


def snils_check(body: str) -> str:
    total = sum(int(d) * w for d, w in zip(body, range(9, 0, -1)))
    check = total if total < 100 else (0 if total % 101 == 100 else total % 101)
    return f'{check:02d}'


def snils(body: str, dashed: bool = True) -> str:
    digits = body + snils_check(body)
    return f'{digits[0:3]}-{digits[3:6]}-{digits[6:9]} {digits[9:]}' if dashed else digits


def inn10(body9: str) -> str:
    weights = [2, 4, 10, 3, 5, 9, 4, 6, 8]
    return body9 + str(sum(int(d) * w for d, w in zip(body9, weights)) % 11 % 10)


def ogrn(body12: str) -> str:
    return body12 + str(int(body12) % 11 % 10)


def new_uuid() -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


# ---- the canonical columns (src/input/fields.ts) ----

DEAL_FIELDS = ['dealId', 'objectType', 'cadastralNumber', 'region', 'district', 'city', 'settlement', 'street',
               'streetType', 'house', 'building', 'structure', 'apartment', 'apartmentType', 'areaValue', 'areaUnit']
OWNER_SUFFIXES = ['Surname', 'Name', 'Patronymic', 'BirthDate', 'BirthPlace', 'Snils', 'Gender', 'Citizenship',
                  'DocType', 'DocSeries', 'DocNumber', 'DocIssueDate', 'DocIssuerCode', 'DocIssuerName', 'FiasId',
                  'Region', 'City', 'Street', 'StreetType', 'House', 'Apartment']
AGREEMENT_FIELDS = ['agreementContentId', 'agreementSignatureIds', 'agreementFileType']
COLUMNS = DEAL_FIELDS + [p + s for p in ('owner', 'owner2') for s in OWNER_SUFFIXES] + AGREEMENT_FIELDS

# ---- places: region levels, passport series prefix, issuer code prefix and name ----

PLACES = {
    'NSK': dict(region='Новосибирская область', city='Новосибирск', series='50', code='540',
                issuer='ГУ МВД России по Новосибирской области', okato=50, key=154),
    'MSK': dict(region='Москва', series='45', code='770', issuer='ГУ МВД России по г. Москве', okato=45, key=177),
    'SPB': dict(region='Санкт-Петербург', series='40', code='780',
                issuer='ГУ МВД России по г. Санкт-Петербургу и Ленинградской области', okato=40, key=178),
    'EKB': dict(region='Свердловская область', city='Екатеринбург', series='65', code='660',
                issuer='ГУ МВД России по Свердловской области', okato=65, key=166),
    'KZN': dict(region='Республика Татарстан', city='Казань', series='92', code='160',
                issuer='МВД по Республике Татарстан', okato=92, key=116),
    'CRM': dict(region='Республика Крым', city='Симферополь', series='39', code='910',
                issuer='МВД по Республике Крым', okato=35, key=191),
}


def owner(prefix, place, surname, name, patronymic, birth, birth_place, gender, issued, *,
          snils_dashed=True, series_spaced=True, address=None, code_dashed=True, gender_text=None):
    """An owner's columns; the address defaults to the structured one given."""
    p = PLACES[place]
    body = f'{rng.randrange(10**8, 10**9):09d}'
    series_digits = p['series'] + issued[2:4] if '-' in issued else p['series'] + issued[-2:]
    code = f"{p['code']}-{rng.randrange(1, 100):03d}"
    row = {
        'Surname': surname, 'Name': name, 'Patronymic': patronymic, 'BirthDate': birth, 'BirthPlace': birth_place,
        'Snils': snils(body, snils_dashed), 'Gender': gender_text or gender,
        'DocSeries': f'{series_digits[:2]} {series_digits[2:]}' if series_spaced else series_digits,
        'DocNumber': f'{rng.randrange(100000, 1000000)}', 'DocIssueDate': issued,
        'DocIssuerCode': code if code_dashed else code.replace('-', ''), 'DocIssuerName': p['issuer'],
    }
    row.update(address or {})
    return {prefix + k: v for k, v in row.items()}


def home(place, street, house, apartment, street_type=''):
    p = PLACES[place]
    return {'Region': p['region'], 'City': p.get('city', ''), 'Street': street, 'StreetType': street_type,
            'House': house, 'Apartment': apartment}


def signatures(n, sep='|'):
    return sep.join(new_uuid() for _ in range(n))


def deal(deal_id, place, street, house, apartment, area, *, cn='', sigs=1, sep='|', street_type='', building='',
         district='', city=None, settlement='', **extra):
    p = PLACES[place]
    row = {'dealId': deal_id, 'cadastralNumber': cn, 'region': p['region'], 'district': district,
           'city': p.get('city', '') if city is None else city, 'settlement': settlement, 'street': street,
           'streetType': street_type, 'house': house, 'building': building, 'apartment': apartment,
           'areaValue': area, 'agreementContentId': new_uuid(), 'agreementSignatureIds': signatures(sigs, sep)}
    row.update(extra)
    return row


# ---- the rows: (row fields, expected outcome, why) ----
# Owners' SNILS bodies come from rng, so the order of calls below fixes every value.

ROWS = []


def add(row, outcome, why):
    ROWS.append((row, outcome, why))


add({**deal('NSK-2026-000123', 'NSK', 'Челюскинцев', '14', '81', '56.2'),
     **owner('owner', 'NSK', 'Кузнецов', 'Андрей', 'Викторович', '1986-04-12', 'г. Новосибирск', 'male', '2006-05-03',
             address=home('NSK', 'Челюскинцев', '14', '81'))},
    'queued', 'suggest finds one object equal to Челюскинцев 14, кв 81; one signature')
add({**deal('MSK-2026-004511', 'MSK', 'Профсоюзная', '104', '215', '38.5', cn='77:06:0005011:2376'),
     **owner('owner', 'MSK', 'Смирнова', 'Ольга', 'Игоревна', '1991-09-23', 'г. Москва', 'female', '2011-10-14',
             gender_text='ж', address=home('MSK', 'Профсоюзная', '104', '215'))},
    'queued', 'cadastral number given (no suggest); owner gender written ж')
add({**deal('NSK-2026-000124', 'NSK', 'Татьяны Снежиной', '39', '57', '64.8', sigs=2),
     **owner('owner', 'NSK', 'Попов', 'Дмитрий', 'Сергеевич', '1988-02-02', 'г. Бердск Новосибирской области', 'male',
             '2008-03-11', address=home('NSK', 'Татьяны Снежиной', '39', '57')),
     **owner('owner2', 'NSK', 'Попова', 'Екатерина', 'Алексеевна', '1990-07-19', 'г. Новосибирск', 'female',
             '2010-08-05', address=home('NSK', 'Татьяны Снежиной', '39', '57'))},
    'queued', 'suggest returns 39 and 39/1 with кв 57; the row asks 39 and gets it; spouses (owner2); two signatures')
add({**deal('SPB-2026-010077', 'SPB', 'Просвещения', '87', '140', '71.3', street_type='пр-кт', building='2'),
     **owner('owner', 'SPB', 'Иванов', 'Сергей', 'Петрович', '1979-11-30', 'г. Ленинград', 'male', '2024-12-10',
             address={'FiasId': new_uuid(), 'Apartment': '140'})},
    'queued', 'suggest returns корпус 1 and корпус 2; the row asks корпус 2; owner address by ownerFiasId')
add({**deal('MSK-2026-004512', 'MSK', 'Хорошёвское', '12', '44', '52', street_type='ш'),
     **owner('owner', 'MSK', 'Фёдоров', 'Алексей', 'Николаевич', '1984-06-05', 'г. Москва', 'male', '2004-06-21',
             address=home('MSK', 'Хорошёвское', '12', '44', 'ш'))},
    'queued', 'street written with ё, the register has ХОРОШЕВСКОЕ; 12 корпус 2 at the same flat is not equal')
add({**deal('SPB-2026-010078', 'SPB', 'Наличная', '36', '112', '45,6', cn='78:06:0002123:4471'),
     **owner('owner', 'SPB', 'Соколова', 'Анна', 'Михайловна', '14.03.1988', 'г. Санкт-Петербург', 'female',
             '02.04.2008', snils_dashed=False, series_spaced=False,
             address=home('SPB', 'Наличная', '36', '112'))},
    'queued', 'dates written DD.MM.YYYY, area with a decimal comma (45,6); cadastral number given')
add({**deal('EKB-2026-000311', 'EKB', 'Малышева', '120', '33', '58.9', sigs=2, sep=','),
     **owner('owner', 'EKB', 'Морозов', 'Илья', 'Андреевич', '1992-01-17', 'г. Свердловск', 'male', '2012-02-07',
             address=home('EKB', 'Малышева', '120', '33')),
     **owner('owner2', 'EKB', 'Морозова', 'Дарья', 'Олеговна', '1993-05-28', 'г. Нижний Тагил Свердловской области',
             'female', '2013-06-18', address=home('EKB', 'Малышева', '120', '33'))},
    'queued', 'suggest finds Малышева 120, кв 33; spouses (owner2); signatures separated by a comma')
add({**deal('KZN-2026-000051', 'KZN', 'Чистопольская', '61', '98', '77.4'),
     **owner('owner', 'KZN', 'Хабибуллин', 'Ринат', 'Ильдарович', '1985-08-08', 'г. Казань', 'M', '2005-09-01',
             address=home('KZN', 'Чистопольская', '61', '98')),
     **owner('owner2', 'KZN', 'Хабибуллина', 'Алсу', 'Рашидовна', '1987-12-03', 'г. Набережные Челны', 'F',
             '2007-12-20', address=home('KZN', 'Чистопольская', '61', '98'))},
    'queued', 'suggest finds Чистопольская 61, кв 98; spouses (owner2); genders written M and F')
add({**deal('NSK-2026-000127', 'NSK', 'Ватутина', '27', '5', '33.1', cn='54:35:062575:1190'),
     **owner('owner', 'NSK', 'Лебедев', 'Павел', 'Юрьевич', '1995-03-14', 'г. Новосибирск', 'male', '2015-03-30',
             address=home('NSK', 'Ватутина', '27', '5'))},
    'invalid', 'ownerSnils checksum does not match (one problem)')
add({**deal('EKB-2026-000312', 'EKB', 'Белинского', '222', '17', '41.7', cn='66:41:0508021:3094'),
     **owner('owner', 'EKB', 'Власова', 'Наталья', 'Владимировна', '1983-10-21', 'г. Каменск-Уральский', 'female',
             '2003-11-05', address=home('EKB', 'Белинского', '222', '17'))},
    'queued', 'cadastral number given (no suggest)')
add({**deal('KZN-2026-000052', 'KZN', 'Рихарда Зорге', '95', '204', '49.3', cn='16:50:160214:2251'),
     **owner('owner', 'KZN', 'Гарипова', 'Лилия', 'Маратовна', '1994-04-04', 'г. Казань', 'female', '2014-04-22',
             address=home('KZN', 'Рихарда Зорге', '95', '204'))},
    'queued', 'cadastral number given (no suggest)')
add({**deal('KZN-2026-000054', 'KZN', 'Баумана', '15', '7', '88'),
     **owner('owner', 'KZN', 'Сафин', 'Айдар', 'Рустемович', '1982-02-25', 'г. Альметьевск', 'male', '2002-03-12',
             address=home('KZN', 'Баумана', '15', '7'))},
    'not_found', 'suggest returns 15/2 and 15а with кв 7; none equals 15')
add({**deal('NSK-2026-000125', 'NSK', 'Красный', '220', '9', '102.5', cn='54:35:041105:733', sigs=2, sep=' ',
            street_type='пр-кт', agreementFileType='pdf'),
     **owner('owner', 'NSK', 'Новикова', 'Марина', 'Васильевна', '1976-09-09', 'с. Колывань Новосибирской области',
             'female', '2021-09-15', address=home('NSK', 'Красный', '220', '9', 'пр-кт'))},
    'queued', 'cadastral number given; two signatures separated by a space')
add({**deal('SPB-2026-010079', 'SPB', 'Савушкина', '119', '88', '36'),
     **owner('owner', 'SPB', 'Егоров', 'Никита', 'Александрович', '1997-07-07', '', 'male', '31.02.2017',
             address=home('SPB', 'Савушкина', '119', '88'))},
    'invalid', 'ownerBirthPlace is empty and ownerDocIssueDate 31.02 is not a date (two problems)')
add({**deal('MSK-2026-004513', 'MSK', 'Маршала Бирюзова', '32', '17', '61.2'),
     **owner('owner', 'MSK', 'Орлов', 'Максим', 'Евгеньевич', '1989-12-12', 'г. Москва', 'male', '2009-12-28',
             address=home('MSK', 'Маршала Бирюзова', '32', '17'))},
    'queued', 'suggest finds Маршала Бирюзова 32, кв 17')
add({**deal('NSK-2026-000126', 'NSK', 'Богдана Хмельницкого', '8', '61', '44.4', cn='54:35:051130:902', sigs=0),
     **owner('owner', 'NSK', 'Зайцев', 'Артём', 'Игоревич', '1993-08-30', 'г. Новосибирск', 'male', '2013-09-17',
             address=home('NSK', 'Богдана Хмельницкого', '8', '61'))},
    'suspended', 'no agreementSignatureIds (the gateway answers 201); cadastral number given')
add({**deal('EKB-2026-000315', 'EKB', 'Малышева', '51', '12', '47.5'),
     **owner('owner', 'EKB', 'Кириллов', 'Олег', 'Станиславович', '1980-05-15', 'г. Екатеринбург', 'male',
             '2025-05-20', address=home('EKB', 'Малышева', '51', '12'))},
    'ambiguous', 'the register holds Малышева 51, кв 12 twice, under two cadastral numbers')
add({**deal('MSK-2026-004511', 'MSK', 'Вавилова', '81', '112', '54.1', cn='77:06:0001003:1578'),
     **owner('owner', 'MSK', 'Белова', 'Ирина', 'Сергеевна', '1987-03-03', 'г. Москва', 'female', '2007-03-22',
             address=home('MSK', 'Вавилова', '81', '112'))},
    'invalid', 'dealId repeats row 2 (the later occurrence is refused; one problem)')
add({**deal('MSK-2026-004514', 'MSK', 'Вавилова', '81', '113', '54.3', sigs=0),
     **owner('owner', 'MSK', 'Тарасов', 'Виктор', 'Олегович', '1978-01-29', 'г. Тула', 'male', '2023-02-14',
             address=home('MSK', 'Вавилова', '81', '113'))},
    'suspended', 'no agreementSignatureIds (201); suggest finds Вавилова 81, кв 113')
add({**deal('SPB-2026-010080', 'SPB', 'Савушкина', '126', '301', '39.8'),
     **owner('owner', 'SPB', 'Николаева', 'Светлана', 'Андреевна', '1990-11-11', 'г. Выборг Ленинградской области',
             'female', '2010-11-25', address=home('SPB', 'Савушкина', '126', '301'))},
    'ambiguous', 'the register holds Савушкина 126, кв 301 twice, under two cadastral numbers')
add({**deal('KZN-2026-000053', 'KZN', 'Адоратского', '4', '56', '42', cn='16:50:110203:1875', sigs=0),
     **owner('owner', 'KZN', 'Валиева', 'Гульнара', 'Фаритовна', '1996-06-16', 'г. Зеленодольск', 'female',
             '2016-07-01', address=home('KZN', 'Адоратского', '4', '56'))},
    'suspended', 'no agreementSignatureIds (201); cadastral number given')
add({**deal('EKB-2026-000314', 'EKB', 'Лесная', '18', '', '0,12', cn='66:25:2901004:517', sigs=0,
            objectType='landPlot', areaUnit='га', city='', district='Сысертский район', settlement='Кадниковский'),
     **owner('owner', 'EKB', 'Пермяков', 'Евгений', 'Валерьевич', '1981-04-24', 'г. Сысерть', 'male', '2026-05-12',
             address=home('EKB', 'Малышева', '73', '40'))},
    'suspended', 'a land plot of 0,12 га; no agreementSignatureIds (201); cadastral number given')
add({**deal('NSK-2026-000128', 'NSK', 'Центральная', '5', '12', '40.2', district='Новосибирский район', city='',
            settlement='Краснообск'),
     **owner('owner', 'NSK', 'Горбунова', 'Татьяна', 'Павловна', '1972-10-01', 'р.п. Краснообск', 'female',
             '2017-10-19', code_dashed=False, address=home('NSK', 'Центральная', '5', '12'))},
    'queued', 'suggest by district and settlement (no city) finds Центральная 5, кв 12; issuer code without dash')
add({**deal('CRM-2026-000017', 'CRM', 'Киевская', '112', '45', '50.6', cn='90:22:010217:3512'),
     **owner('owner', 'CRM', 'Ткаченко', 'Виктория', 'Николаевна', '1989-02-14', 'г. Симферополь', 'female',
             '2015-03-02', address=home('CRM', 'Киевская', '112', '45'))},
    'unavailable', 'Республика Крым is an EGRON region in the demo: the gateway answers 501 until attempts run out')

assert len(ROWS) == 24
assert all('|' not in why for _, _, why in ROWS), 'the README table is split on |'
# Row 9: break the SNILS check digits (the format stays right).
bad = ROWS[8][0]
digits = bad['ownerSnils'].replace('-', '').replace(' ', '')
bad['ownerSnils'] = snils(digits[:9])[:-2] + f'{(int(digits[9:]) + 7) % 100:02d}'
assert bad['ownerSnils'] != snils(digits[:9])

# ---- the register (sandbox --registry) ----

REGISTRY = json.loads((ROOT / 'test' / 'fixtures' / 'gateway-examples' / 'suggest-response.json').read_text('utf8'))
for o in REGISTRY:
    o.update(region='Новосибирский', city='Новосибирск')


def cadastral(place_key, cn, street, street_abbr, house, apartment, *, src=1, district='', city=None, settlement=''):
    p = PLACES[place_key]
    a, b, quarter, number = cn.split(':')
    okato = p['okato']
    settlement_code = rng.randrange(100, 999)
    house_text = house.split('|')
    notes_house = house_text[0] + (f' корп. {house_text[1]}' if house_text[1] else '')
    city_name = p.get('city', '') if city is None else city
    place = ', '.join(x for x in [district, f'г {city_name}' if city_name else '', settlement] if x)
    obj = {
        'objectId': f'{a}:{b}:{int(quarter)}:{number}', 'subjectId': (100 + okato) * 10**9,
        'regionId': (100 + okato) * 10**9 + 401 * 10**6, 'settlementId': (100 + okato) * 10**9 + 401 * 10**6
        + settlement_code * 1000, 'srcObject': src, 'regionKey': p['key'], 'objectCn': cn,
        'street': f'{street.upper()}|{street_abbr}', 'house': house, 'apartment': apartment,
        'addressNotes': f'{place or p["region"]}, {street_abbr.lower()} {street}, д. {notes_house}'
                        + (f', {apartment}' if apartment else ''),
        'region': p['region'],
    }
    for level, value in (('district', district), ('city', city_name), ('settlement', settlement)):
        if value:
            obj[level] = value
    REGISTRY.append(obj)


cadastral('NSK', '54:35:101234:81', 'Челюскинцев', 'УЛ', '14||', '81')
cadastral('NSK', '54:35:101234:82', 'Челюскинцев', 'УЛ', '14||', '82')
cadastral('NSK', '54:35:000000:6057', 'Татьяны Снежиной', 'УЛ', '39||', '57')
cadastral('NSK', '54:35:000000:5257', 'Татьяны Снежиной', 'УЛ', '39/1||', '57')
cadastral('NSK', '54:35:041105:733', 'Красный', 'ПР-КТ', '220||', '9')
cadastral('NSK', '54:35:051130:902', 'Богдана Хмельницкого', 'УЛ', '8||', '61')
cadastral('NSK', '54:19:164501:2204', 'Центральная', 'УЛ', '5||', '12', city='', district='Новосибирский район',
          settlement='Краснообск')
cadastral('MSK', '77:06:0005011:2376', 'Профсоюзная', 'УЛ', '104||', '215')
cadastral('MSK', '77:08:0009005:1432', 'Хорошевское', 'Ш', '12||', '44')
cadastral('MSK', '77:08:0009005:1517', 'Хорошевское', 'Ш', '12|2|', '44')
cadastral('MSK', '77:08:0010004:2795', 'Маршала Бирюзова', 'УЛ', '32||', '17')
cadastral('MSK', '77:06:0001003:1578', 'Вавилова', 'УЛ', '81||', '112')
cadastral('MSK', '77:06:0001003:1579', 'Вавилова', 'УЛ', '81||', '113')
cadastral('SPB', '78:34:0412501:3140', 'Просвещения', 'ПР-КТ', '87|1|', '140')
cadastral('SPB', '78:34:0412501:3259', 'Просвещения', 'ПР-КТ', '87|2|', '140')
cadastral('SPB', '78:34:0004108:5511', 'Савушкина', 'УЛ', '126||', '301')
cadastral('SPB', '78:34:0004108:5512', 'Савушкина', 'УЛ', '126||', '301')
cadastral('SPB', '78:34:0004111:2088', 'Савушкина', 'УЛ', '119||', '88')
cadastral('EKB', '66:41:0702050:4433', 'Малышева', 'УЛ', '120||', '33')
cadastral('EKB', '66:41:0702009:1841', 'Малышева', 'УЛ', '51||', '12')
cadastral('EKB', '66:41:0702009:1893', 'Малышева', 'УЛ', '51||', '12')
cadastral('KZN', '16:50:011301:3398', 'Чистопольская', 'УЛ', '61||', '98')
cadastral('KZN', '16:50:011109:645', 'Баумана', 'УЛ', '15/2||', '7')
cadastral('KZN', '16:50:011109:712', 'Баумана', 'УЛ', '15а||', '7')
cadastral('KZN', '16:50:011109:713', 'Баумана', 'УЛ', '17||', '7')
cadastral('CRM', '90:22:010217:3512', 'Киевская', 'УЛ', '112||', '45')

# ---- the bank profile ----

PROFILE = {
    'organization': {
        'name': 'АО «Банк Пример»', 'inn': inn10('770193458'), 'kpp': '770101001', 'ogrn': ogrn('102770004517'),
        'regDate': '2002-08-14', 'address': {'fiasId': new_uuid()},
    },
    'representative': {
        'representativeType': 'authorized',
        'person': {
            'surname': 'Григорьева', 'name': 'Елена', 'patronymic': 'Викторовна', 'dateBirth': '1982-05-17',
            'birthPlace': 'г. Москва', 'snils': snils('138402715'), 'gender': 'female',
            'identityDocument': {'documentType': 'russPassport', 'series': '45 07', 'number': '318264',
                                 'issueDate': '2007-06-05',
                                 'issuer': {'code': '770-093', 'name': 'ОВД района Хамовники г. Москвы'}},
            'citizenship': 'Российская Федерация',
            'address': {'fiasId': new_uuid(), 'apartment': {'type': 'кв', 'name': '14'}},
        },
    },
}

# ---- self-check: suggest (sandbox) then equality (worker) for every row without a cadastral number ----

STREET_WORDS = {'ул', 'улица', 'пр-кт', 'проспект', 'ш', 'шоссе'}


def norm(value):
    return re.sub(r'\s+', ' ', (value or '').strip().lower().replace('ё', 'е'))


def street_name(value):
    return ' '.join(w for w in norm(value).split(' ') if w.rstrip('.') not in STREET_WORDS)


def suggested(row):
    found = []
    for o in REGISTRY:
        if any(row.get(level) and norm(o.get(level)) != norm(row[level])
               for level in ('region', 'district', 'city', 'settlement')):
            continue
        if street_name(o['street'].split('|')[0]) != street_name(row['street']):
            continue
        number = norm(o['house'].split('|')[0]).replace(' ', '')
        asked = norm(row['house'])
        if not (number == asked or (number.startswith(asked) and not number[len(asked)].isdigit())):
            continue
        if row['apartment'] and norm(o['apartment']) != norm(row['apartment']):
            continue
        found.append(o)
    return found


for index, (row, outcome, why) in enumerate(ROWS, 1):
    if row['cadastralNumber'] or outcome == 'invalid':
        continue
    candidates = suggested(row)
    wanted = '|'.join(norm(row.get(k, '')) for k in ('house', 'building', 'structure'))
    equal = {o['objectCn'] for o in candidates
             if street_name(o['street'].split('|')[0]) == street_name(row['street'])
             and norm(o['house']) == wanted and norm(o['apartment']) == norm(row['apartment'])}
    expected = {'not_found': 0, 'ambiguous': 2}.get(outcome, 1)
    assert candidates and len(equal) == expected, (index, row['dealId'], outcome, len(candidates), equal)

# ---- write ----

SAMPLES.mkdir(exist_ok=True)
out = io.StringIO()
writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator='\n', restval='')
writer.writeheader()
for row, _, _ in ROWS:
    writer.writerow(row)
(SAMPLES / 'deals.csv').write_text(out.getvalue(), 'utf8')
(SAMPLES / 'registry.json').write_text(json.dumps(REGISTRY, ensure_ascii=False, indent=2) + '\n', 'utf8')
(SAMPLES / 'bank-profile.json').write_text(json.dumps(PROFILE, ensure_ascii=False, indent=2) + '\n', 'utf8')

counts = {}
for _, outcome, _ in ROWS:
    counts[outcome] = counts.get(outcome, 0) + 1
table = '\n'.join(f'| {i} | {row["dealId"]} | {outcome} | {why} |' for i, (row, outcome, why) in enumerate(ROWS, 1))
summary = ', '.join(f'{k} {v}' for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
(SAMPLES / 'README.md').write_text(f'''# Samples

Fictional data for the demo and the tests; no real person, bank or object. Written by
`python3 scripts/gen-samples.py` (deterministic): edit the script, not the files.

| file | what it is |
|---|---|
| `deals.csv` | 24 deals, UTF-8, comma, a header row of canonical field names ([docs/input-format.md](../docs/input-format.md)) |
| `bank-profile.json` | a valid bank profile (`--profile`): INN, KPP, OGRN and SNILS with valid check digits |
| `registry.json` | the cadastral objects the sandbox's suggest answers from (`--registry`), including the two of `test/fixtures/gateway-examples/suggest-response.json` under region `Новосибирский`, city `Новосибирск` |

Demo settings: the sandbox runs with `--registry samples/registry.json --sessions demo-session
--egron-regions "Республика Крым"`, and `realty-batch run samples/deals.csv --profile
samples/bank-profile.json` runs against it with session `demo-session`. Expected outcomes:
{summary} (24 rows).

The expected outcome of every row (row = 1-based record index, header not counted).
`test/validate-deal.test.ts` checks that exactly the rows marked `invalid` are invalid.

| row | dealId | outcome | why |
|---|---|---|---|
{table}
''', 'utf8')
print(f'wrote {len(ROWS)} deals, {len(REGISTRY)} registry objects; {summary}')

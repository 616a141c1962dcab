/**
 * Writes samples/deals.csv, samples/registry.json, samples/bank-profile.json and
 * samples/README.md: the demo's input, the sandbox register it runs against, and the
 * outcome every row must end with.
 *
 * All people, ids and numbers are fictional; SNILS, INN and OGRN carry valid check
 * digits (src/input/checksums.ts) unless a row is meant to fail. The script also
 * checks its own promises: every row meant to go through suggest meets, in the
 * sandbox's suggest and the worker's matching (the project's own code), the number of
 * equal candidates its outcome needs.
 *
 *     npm run samples      # builds, then node dist/scripts/gen-samples.js; deterministic
 *
 * The random source is Python's (MT19937 seeded as random.Random(20261121)): the
 * samples were first written by a Python script (scripts/gen-samples.py, until
 * this port), and the same draws keep every SNILS, passport number and UUID they hold.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, parse as parsePath, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { snilsCheckDigits } from '../src/input/checksums.js';
import { CANONICAL_FIELDS, type CanonicalField } from '../src/input/fields.js';
import { createDealValidator } from '../src/input/validate-deal.js';
import type { SuggestCandidate } from '../src/domain/gateway.js';
import { validateRegistry, type RegistryObject } from '../src/sandbox/registry.js';
import { indexRegistry, parseSuggestQuery, suggest } from '../src/sandbox/suggest.js';
import { matchCandidate } from '../src/worker/deal/match-candidate.js';
import { suggestQuery } from '../src/worker/deal/resolve-cadastral.js';

// ---- the random source: CPython's Mersenne Twister, draw for draw ----

/** `random.Random(seed)` of CPython for a seed below 2^32: getrandbits and randrange only. */
export class PythonRandom {
  private readonly mt = new Uint32Array(624);
  private index = 624;

  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError('The seed is a 32-bit unsigned integer');
    // init_by_array([seed]), as random_seed() calls it for a small int.
    const mt = this.mt;
    mt[0] = 19650218;
    for (let i = 1; i < 624; i++) mt[i] = Math.imul(1812433253, mt[i - 1]! ^ (mt[i - 1]! >>> 30)) + i;
    const key = [seed];
    let i = 1;
    let j = 0;
    for (let k = Math.max(624, key.length); k > 0; k--) {
      mt[i] = (mt[i]! ^ Math.imul(mt[i - 1]! ^ (mt[i - 1]! >>> 30), 1664525)) + key[j]! + j;
      i++;
      j++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = 623; k > 0; k--) {
      mt[i] = (mt[i]! ^ Math.imul(mt[i - 1]! ^ (mt[i - 1]! >>> 30), 1566083941)) - i;
      i++;
      if (i >= 624) {
        mt[0] = mt[623]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000;
  }

  private uint32(): number {
    const mt = this.mt;
    if (this.index >= 624) {
      for (let k = 0; k < 624; k++) {
        const y = (mt[k]! & 0x80000000) | (mt[(k + 1) % 624]! & 0x7fffffff);
        mt[k] = mt[(k + 397) % 624]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `getrandbits(k)`: 32-bit words, least significant first; the last one keeps its top bits. */
  getrandbits(k: number): bigint {
    let value = 0n;
    for (let shift = 0; k > 0; shift += 32, k -= 32) {
      const word = k < 32 ? this.uint32() >>> (32 - k) : this.uint32();
      value |= BigInt(word) << BigInt(shift);
    }
    return value;
  }

  /** `randrange(start, stop)`: rejection sampling on bit_length(stop - start) bits. */
  randrange(start: number, stop: number): number {
    const n = stop - start;
    if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError('randrange wants start < stop');
    const bits = n.toString(2).length;
    let r = Number(this.getrandbits(bits));
    while (r >= n) r = Number(this.getrandbits(bits));
    return start + r;
  }

  /** `str(uuid.UUID(int=getrandbits(128), version=4))`. */
  uuid4(): string {
    let value = this.getrandbits(128);
    value &= ~(0xc000n << 48n);
    value |= 0x8000n << 48n;
    value &= ~(0xf000n << 64n);
    value |= 4n << 76n;
    const hex = value.toString(16).padStart(32, '0');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}

// ---- check digits, from src/input/checksums.ts ----

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

function snils(body: string, dashed = true): string {
  const digits = body + snilsCheckDigits(body);
  return dashed ? `${digits.slice(0, 3)}-${digits.slice(3, 6)}-${digits.slice(6, 9)} ${digits.slice(9)}` : digits;
}

/** The tenth digit of a legal entity's INN: the one isValidInn accepts. */
function inn10(body9: string): string {
  const weights = [2, 4, 10, 3, 5, 9, 4, 6, 8];
  return body9 + String(([...body9].reduce((sum, d, i) => sum + Number(d) * weights[i]!, 0) % 11) % 10);
}

/** The thirteenth digit of an OGRN: the one isValidOgrn accepts. */
function ogrn(body12: string): string {
  return body12 + String((Number(body12) % 11) % 10);
}

// ---- places: region levels, passport series prefix, issuer code prefix and name ----

interface Place {
  region: string;
  city?: string;
  series: string;
  code: string;
  issuer: string;
  okato: number;
  key: number;
}

const PLACES = {
  NSK: {
    region: 'Новосибирская область',
    city: 'Новосибирск',
    series: '50',
    code: '540',
    issuer: 'ГУ МВД России по Новосибирской области',
    okato: 50,
    key: 154,
  },
  MSK: { region: 'Москва', series: '45', code: '770', issuer: 'ГУ МВД России по г. Москве', okato: 45, key: 177 },
  SPB: {
    region: 'Санкт-Петербург',
    series: '40',
    code: '780',
    issuer: 'ГУ МВД России по г. Санкт-Петербургу и Ленинградской области',
    okato: 40,
    key: 178,
  },
  EKB: {
    region: 'Свердловская область',
    city: 'Екатеринбург',
    series: '65',
    code: '660',
    issuer: 'ГУ МВД России по Свердловской области',
    okato: 65,
    key: 166,
  },
  KZN: {
    region: 'Республика Татарстан',
    city: 'Казань',
    series: '92',
    code: '160',
    issuer: 'МВД по Республике Татарстан',
    okato: 92,
    key: 116,
  },
  CRM: { region: 'Республика Крым', city: 'Симферополь', series: '39', code: '910', issuer: 'МВД по Республике Крым', okato: 35, key: 191 },
} satisfies Record<string, Place>;
type PlaceKey = keyof typeof PLACES;
const place = (key: PlaceKey): Place => PLACES[key];

// ---- the rows ----

type Row = Partial<Record<CanonicalField, string>>;
type Outcome = 'queued' | 'suspended' | 'invalid' | 'not_found' | 'ambiguous' | 'unavailable';
type OwnerSuffix = 'Region' | 'City' | 'Street' | 'StreetType' | 'House' | 'Apartment' | 'FiasId';
type OwnerAddress = Partial<Record<OwnerSuffix, string>>;

interface OwnerOptions {
  snilsDashed?: boolean;
  seriesSpaced?: boolean;
  address?: OwnerAddress;
  codeDashed?: boolean;
  genderText?: string;
}

interface DealOptions {
  cn?: string;
  sigs?: number;
  sep?: string;
  streetType?: string;
  building?: string;
  district?: string;
  city?: string;
  settlement?: string;
  extra?: Row;
}

/** The sample's columns: its agreements are content ids, so the file columns (agreementFile, ...) stay out. */
const SAMPLE_FIELDS = CANONICAL_FIELDS.filter((f) => f !== 'agreementFile' && f !== 'agreementSignatureFiles');

export interface Samples {
  'deals.csv': string;
  'deals-with-files.csv': string;
  'agreement-a.pdf': string;
  'agreement-b.pdf': string;
  /** DER: bytes, not text. */
  'agreement-a.pdf.sig': Buffer;
  'registry.json': string;
  'bank-profile.json': string;
  'README.md': string;
}

export const SAMPLE_FILES = [
  'deals.csv',
  'deals-with-files.csv',
  'agreement-a.pdf',
  'agreement-b.pdf',
  'agreement-a.pdf.sig',
  'registry.json',
  'bank-profile.json',
  'README.md',
] as const satisfies ReadonlyArray<keyof Samples>;

/** The package root: the first directory with a package.json above this module (scripts/ or dist/scripts/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  const top = parsePath(dir).root;
  while (!existsSync(join(dir, 'package.json'))) {
    if (dir === top) throw new Error('The package root (a directory with package.json) was not found above scripts/.');
    dir = dirname(dir);
  }
  return dir;
}

/** The day the samples' dates are checked against: the tests' day (test/unit/validate-deal.test.ts). */
const TODAY = new Date(2026, 10, 21);

/** Every sample file's text. Deterministic: the same code writes the same bytes. */
export function generateSamples(root = packageRoot()): Samples {
  const rng = new PythonRandom(20261121);
  const newUuid = (): string => rng.uuid4();

  function owner(
    prefix: 'owner' | 'owner2',
    key: PlaceKey,
    surname: string,
    name: string,
    patronymic: string,
    birth: string,
    birthPlace: string,
    gender: string,
    issued: string,
    options: OwnerOptions = {},
  ): Row {
    const { snilsDashed = true, seriesSpaced = true, address, codeDashed = true, genderText } = options;
    const p = place(key);
    const body = pad(rng.randrange(10 ** 8, 10 ** 9), 9);
    const seriesDigits = p.series + (issued.includes('-') ? issued.slice(2, 4) : issued.slice(-2));
    const code = `${p.code}-${pad(rng.randrange(1, 100), 3)}`;
    const fields: Record<string, string> = {
      Surname: surname,
      Name: name,
      Patronymic: patronymic,
      BirthDate: birth,
      BirthPlace: birthPlace,
      Snils: snils(body, snilsDashed),
      Gender: genderText || gender,
      DocSeries: seriesSpaced ? `${seriesDigits.slice(0, 2)} ${seriesDigits.slice(2)}` : seriesDigits,
      DocNumber: String(rng.randrange(100000, 1000000)),
      DocIssueDate: issued,
      DocIssuerCode: codeDashed ? code : code.replace('-', ''),
      DocIssuerName: p.issuer,
      ...address,
    };
    return Object.fromEntries(Object.entries(fields).map(([k, v]) => [prefix + k, v]));
  }

  function home(key: PlaceKey, street: string, house: string, apartment: string, streetType = ''): OwnerAddress {
    const p = place(key);
    return { Region: p.region, City: p.city ?? '', Street: street, StreetType: streetType, House: house, Apartment: apartment };
  }

  const signatures = (n: number, sep = '|'): string => Array.from({ length: n }, () => newUuid()).join(sep);

  function deal(
    dealId: string,
    key: PlaceKey,
    street: string,
    house: string,
    apartment: string,
    area: string,
    options: DealOptions = {},
  ): Row {
    const { cn = '', sigs = 1, sep = '|', streetType = '', building = '', district = '', city, settlement = '', extra } = options;
    const p = place(key);
    const row: Row = {
      dealId,
      cadastralNumber: cn,
      region: p.region,
      district,
      city: city ?? p.city ?? '',
      settlement,
      street,
      streetType,
      house,
      building,
      apartment,
      areaValue: area,
      agreementContentId: newUuid(),
      agreementSignatureIds: signatures(sigs, sep),
    };
    return { ...row, ...extra };
  }

  // (row fields, expected outcome, why). Owners' SNILS bodies come from rng, so the order of calls below fixes every value.
  const ROWS: Array<[Row, Outcome, string]> = [];
  const add = (row: Row, outcome: Outcome, why: string): void => {
    ROWS.push([row, outcome, why]);
  };

  add(
    {
      ...deal('NSK-2026-000123', 'NSK', 'Челюскинцев', '14', '81', '56.2'),
      ...owner('owner', 'NSK', 'Кузнецов', 'Андрей', 'Викторович', '1986-04-12', 'г. Новосибирск', 'male', '2006-05-03', {
        address: home('NSK', 'Челюскинцев', '14', '81'),
      }),
    },
    'queued',
    'suggest finds one object equal to Челюскинцев 14, кв 81; one signature',
  );
  add(
    {
      ...deal('MSK-2026-004511', 'MSK', 'Профсоюзная', '104', '215', '38.5', { cn: '77:06:0005011:2376' }),
      ...owner('owner', 'MSK', 'Смирнова', 'Ольга', 'Игоревна', '1991-09-23', 'г. Москва', 'female', '2011-10-14', {
        genderText: 'ж',
        address: home('MSK', 'Профсоюзная', '104', '215'),
      }),
    },
    'queued',
    'cadastral number given (no suggest); owner gender written ж',
  );
  add(
    {
      ...deal('NSK-2026-000124', 'NSK', 'Татьяны Снежиной', '39', '57', '64.8', { sigs: 2 }),
      ...owner('owner', 'NSK', 'Попов', 'Дмитрий', 'Сергеевич', '1988-02-02', 'г. Бердск Новосибирской области', 'male', '2008-03-11', {
        address: home('NSK', 'Татьяны Снежиной', '39', '57'),
      }),
      ...owner('owner2', 'NSK', 'Попова', 'Екатерина', 'Алексеевна', '1990-07-19', 'г. Новосибирск', 'female', '2010-08-05', {
        address: home('NSK', 'Татьяны Снежиной', '39', '57'),
      }),
    },
    'queued',
    'suggest returns 39 and 39/1 with кв 57; the row asks 39 and gets it; spouses (owner2); two signatures',
  );
  add(
    {
      ...deal('SPB-2026-010077', 'SPB', 'Просвещения', '87', '140', '71.3', { streetType: 'пр-кт', building: '2' }),
      ...owner('owner', 'SPB', 'Иванов', 'Сергей', 'Петрович', '1979-11-30', 'г. Ленинград', 'male', '2024-12-10', {
        address: { FiasId: newUuid(), Apartment: '140' },
      }),
    },
    'queued',
    'suggest returns корпус 1 and корпус 2; the row asks корпус 2; owner address by ownerFiasId',
  );
  add(
    {
      ...deal('MSK-2026-004512', 'MSK', 'Хорошёвское', '12', '44', '52', { streetType: 'ш' }),
      ...owner('owner', 'MSK', 'Фёдоров', 'Алексей', 'Николаевич', '1984-06-05', 'г. Москва', 'male', '2004-06-21', {
        address: home('MSK', 'Хорошёвское', '12', '44', 'ш'),
      }),
    },
    'queued',
    'street written with ё, the register has ХОРОШЕВСКОЕ; 12 корпус 2 at the same flat is not equal',
  );
  add(
    {
      ...deal('SPB-2026-010078', 'SPB', 'Наличная', '36', '112', '45,6', { cn: '78:06:0002123:4471' }),
      ...owner('owner', 'SPB', 'Соколова', 'Анна', 'Михайловна', '14.03.1988', 'г. Санкт-Петербург', 'female', '02.04.2008', {
        snilsDashed: false,
        seriesSpaced: false,
        address: home('SPB', 'Наличная', '36', '112'),
      }),
    },
    'queued',
    'dates written DD.MM.YYYY, area with a decimal comma (45,6); cadastral number given',
  );
  add(
    {
      ...deal('EKB-2026-000311', 'EKB', 'Малышева', '120', '33', '58.9', { sigs: 2, sep: ',' }),
      ...owner('owner', 'EKB', 'Морозов', 'Илья', 'Андреевич', '1992-01-17', 'г. Свердловск', 'male', '2012-02-07', {
        address: home('EKB', 'Малышева', '120', '33'),
      }),
      ...owner(
        'owner2',
        'EKB',
        'Морозова',
        'Дарья',
        'Олеговна',
        '1993-05-28',
        'г. Нижний Тагил Свердловской области',
        'female',
        '2013-06-18',
        { address: home('EKB', 'Малышева', '120', '33') },
      ),
    },
    'queued',
    'suggest finds Малышева 120, кв 33; spouses (owner2); signatures separated by a comma',
  );
  add(
    {
      ...deal('KZN-2026-000051', 'KZN', 'Чистопольская', '61', '98', '77.4'),
      ...owner('owner', 'KZN', 'Хабибуллин', 'Ринат', 'Ильдарович', '1985-08-08', 'г. Казань', 'M', '2005-09-01', {
        address: home('KZN', 'Чистопольская', '61', '98'),
      }),
      ...owner('owner2', 'KZN', 'Хабибуллина', 'Алсу', 'Рашидовна', '1987-12-03', 'г. Набережные Челны', 'F', '2007-12-20', {
        address: home('KZN', 'Чистопольская', '61', '98'),
      }),
    },
    'queued',
    'suggest finds Чистопольская 61, кв 98; spouses (owner2); genders written M and F',
  );
  add(
    {
      ...deal('NSK-2026-000127', 'NSK', 'Ватутина', '27', '5', '33.1', { cn: '54:35:062575:1190' }),
      ...owner('owner', 'NSK', 'Лебедев', 'Павел', 'Юрьевич', '1995-03-14', 'г. Новосибирск', 'male', '2015-03-30', {
        address: home('NSK', 'Ватутина', '27', '5'),
      }),
    },
    'invalid',
    'ownerSnils checksum does not match (one problem)',
  );
  add(
    {
      ...deal('EKB-2026-000312', 'EKB', 'Белинского', '222', '17', '41.7', { cn: '66:41:0508021:3094' }),
      ...owner('owner', 'EKB', 'Власова', 'Наталья', 'Владимировна', '1983-10-21', 'г. Каменск-Уральский', 'female', '2003-11-05', {
        address: home('EKB', 'Белинского', '222', '17'),
      }),
    },
    'queued',
    'cadastral number given (no suggest)',
  );
  add(
    {
      ...deal('KZN-2026-000052', 'KZN', 'Рихарда Зорге', '95', '204', '49.3', { cn: '16:50:160214:2251' }),
      ...owner('owner', 'KZN', 'Гарипова', 'Лилия', 'Маратовна', '1994-04-04', 'г. Казань', 'female', '2014-04-22', {
        address: home('KZN', 'Рихарда Зорге', '95', '204'),
      }),
    },
    'queued',
    'cadastral number given (no suggest)',
  );
  add(
    {
      ...deal('KZN-2026-000054', 'KZN', 'Баумана', '15', '7', '88'),
      ...owner('owner', 'KZN', 'Сафин', 'Айдар', 'Рустемович', '1982-02-25', 'г. Альметьевск', 'male', '2002-03-12', {
        address: home('KZN', 'Баумана', '15', '7'),
      }),
    },
    'not_found',
    'suggest returns 15/2 and 15а with кв 7; none equals 15',
  );
  add(
    {
      ...deal('NSK-2026-000125', 'NSK', 'Красный', '220', '9', '102.5', {
        cn: '54:35:041105:733',
        sigs: 2,
        sep: ' ',
        streetType: 'пр-кт',
        extra: { agreementFileType: 'pdf' },
      }),
      ...owner(
        'owner',
        'NSK',
        'Новикова',
        'Марина',
        'Васильевна',
        '1976-09-09',
        'с. Колывань Новосибирской области',
        'female',
        '2021-09-15',
        { address: home('NSK', 'Красный', '220', '9', 'пр-кт') },
      ),
    },
    'queued',
    'cadastral number given; two signatures separated by a space',
  );
  add(
    {
      ...deal('SPB-2026-010079', 'SPB', 'Савушкина', '119', '88', '36'),
      ...owner('owner', 'SPB', 'Егоров', 'Никита', 'Александрович', '1997-07-07', '', 'male', '31.02.2017', {
        address: home('SPB', 'Савушкина', '119', '88'),
      }),
    },
    'invalid',
    'ownerBirthPlace is empty and ownerDocIssueDate 31.02 is not a date (two problems)',
  );
  add(
    {
      ...deal('MSK-2026-004513', 'MSK', 'Маршала Бирюзова', '32', '17', '61.2'),
      ...owner('owner', 'MSK', 'Орлов', 'Максим', 'Евгеньевич', '1989-12-12', 'г. Москва', 'male', '2009-12-28', {
        address: home('MSK', 'Маршала Бирюзова', '32', '17'),
      }),
    },
    'queued',
    'suggest finds Маршала Бирюзова 32, кв 17',
  );
  add(
    {
      ...deal('NSK-2026-000126', 'NSK', 'Богдана Хмельницкого', '8', '61', '44.4', { cn: '54:35:051130:902', sigs: 0 }),
      ...owner('owner', 'NSK', 'Зайцев', 'Артём', 'Игоревич', '1993-08-30', 'г. Новосибирск', 'male', '2013-09-17', {
        address: home('NSK', 'Богдана Хмельницкого', '8', '61'),
      }),
    },
    'suspended',
    'no agreementSignatureIds (the gateway answers 201); cadastral number given',
  );
  add(
    {
      ...deal('EKB-2026-000315', 'EKB', 'Малышева', '51', '12', '47.5'),
      ...owner('owner', 'EKB', 'Кириллов', 'Олег', 'Станиславович', '1980-05-15', 'г. Екатеринбург', 'male', '2025-05-20', {
        address: home('EKB', 'Малышева', '51', '12'),
      }),
    },
    'ambiguous',
    'the register holds Малышева 51, кв 12 twice, under two cadastral numbers',
  );
  add(
    {
      ...deal('MSK-2026-004511', 'MSK', 'Вавилова', '81', '112', '54.1', { cn: '77:06:0001003:1578' }),
      ...owner('owner', 'MSK', 'Белова', 'Ирина', 'Сергеевна', '1987-03-03', 'г. Москва', 'female', '2007-03-22', {
        address: home('MSK', 'Вавилова', '81', '112'),
      }),
    },
    'invalid',
    'dealId repeats row 2 (the later occurrence is refused; one problem)',
  );
  add(
    {
      ...deal('MSK-2026-004514', 'MSK', 'Вавилова', '81', '113', '54.3', { sigs: 0 }),
      ...owner('owner', 'MSK', 'Тарасов', 'Виктор', 'Олегович', '1978-01-29', 'г. Тула', 'male', '2023-02-14', {
        address: home('MSK', 'Вавилова', '81', '113'),
      }),
    },
    'suspended',
    'no agreementSignatureIds (201); suggest finds Вавилова 81, кв 113',
  );
  add(
    {
      ...deal('SPB-2026-010080', 'SPB', 'Савушкина', '126', '301', '39.8'),
      ...owner(
        'owner',
        'SPB',
        'Николаева',
        'Светлана',
        'Андреевна',
        '1990-11-11',
        'г. Выборг Ленинградской области',
        'female',
        '2010-11-25',
        { address: home('SPB', 'Савушкина', '126', '301') },
      ),
    },
    'ambiguous',
    'the register holds Савушкина 126, кв 301 twice, under two cadastral numbers',
  );
  add(
    {
      ...deal('KZN-2026-000053', 'KZN', 'Адоратского', '4', '56', '42', { cn: '16:50:110203:1875', sigs: 0 }),
      ...owner('owner', 'KZN', 'Валиева', 'Гульнара', 'Фаритовна', '1996-06-16', 'г. Зеленодольск', 'female', '2016-07-01', {
        address: home('KZN', 'Адоратского', '4', '56'),
      }),
    },
    'suspended',
    'no agreementSignatureIds (201); cadastral number given',
  );
  add(
    {
      ...deal('EKB-2026-000314', 'EKB', 'Лесная', '18', '', '0,12', {
        cn: '66:25:2901004:517',
        sigs: 0,
        extra: { objectType: 'landPlot', areaUnit: 'га' },
        city: '',
        district: 'Сысертский район',
        settlement: 'Кадниковский',
      }),
      ...owner('owner', 'EKB', 'Пермяков', 'Евгений', 'Валерьевич', '1981-04-24', 'г. Сысерть', 'male', '2026-05-12', {
        address: home('EKB', 'Малышева', '73', '40'),
      }),
    },
    'suspended',
    'a land plot of 0,12 га; no agreementSignatureIds (201); cadastral number given',
  );
  add(
    {
      ...deal('NSK-2026-000128', 'NSK', 'Центральная', '5', '12', '40.2', {
        district: 'Новосибирский район',
        city: '',
        settlement: 'Краснообск',
      }),
      ...owner('owner', 'NSK', 'Горбунова', 'Татьяна', 'Павловна', '1972-10-01', 'р.п. Краснообск', 'female', '2017-10-19', {
        codeDashed: false,
        address: home('NSK', 'Центральная', '5', '12'),
      }),
    },
    'queued',
    'suggest by district and settlement (no city) finds Центральная 5, кв 12; issuer code without dash',
  );
  add(
    {
      ...deal('CRM-2026-000017', 'CRM', 'Киевская', '112', '45', '50.6', { cn: '90:22:010217:3512' }),
      ...owner('owner', 'CRM', 'Ткаченко', 'Виктория', 'Николаевна', '1989-02-14', 'г. Симферополь', 'female', '2015-03-02', {
        address: home('CRM', 'Киевская', '112', '45'),
      }),
    },
    'unavailable',
    'Республика Крым is an EGRON region in the demo: the gateway answers 501 until attempts run out',
  );

  check(ROWS.length === 24, 'there are 24 rows');
  check(
    ROWS.every(([, , why]) => !why.includes('|')),
    'the README table is split on |',
  );
  // Row 9: break the SNILS check digits (the format stays right).
  const bad = ROWS[8]![0];
  const digits = (bad.ownerSnils ?? '').replace(/[- ]/g, '');
  bad.ownerSnils = snils(digits.slice(0, 9)).slice(0, -2) + pad((Number(digits.slice(9)) + 7) % 100, 2);
  check(bad.ownerSnils !== snils(digits.slice(0, 9)), 'row 9 has a wrong SNILS');

  // ---- the register (sandbox --registry) ----

  const examples = join(root, 'test', 'fixtures', 'gateway-examples', 'suggest-response.json');
  const REGISTRY = (JSON.parse(readFileSync(examples, 'utf8')) as Array<Record<string, unknown>>).map((o): Record<string, unknown> => ({
    ...o,
    region: 'Новосибирский',
    city: 'Новосибирск',
  }));

  function cadastral(
    key: PlaceKey,
    cn: string,
    street: string,
    streetAbbr: string,
    house: string,
    apartment: string,
    levels: { district?: string; city?: string; settlement?: string } = {},
  ): void {
    const { district = '', settlement = '' } = levels;
    const p = place(key);
    const [a, b, quarter, number] = cn.split(':') as [string, string, string, string];
    const settlementCode = rng.randrange(100, 999);
    const [houseNumber, building] = house.split('|') as [string, string, string];
    const notesHouse = houseNumber + (building ? ` корп. ${building}` : '');
    const cityName = levels.city ?? p.city ?? '';
    const where = [district, cityName ? `г ${cityName}` : '', settlement].filter((x) => x).join(', ');
    const base = (100 + p.okato) * 10 ** 9;
    const object: Record<string, unknown> = {
      objectId: `${a}:${b}:${Number.parseInt(quarter, 10)}:${number}`,
      subjectId: base,
      regionId: base + 401 * 10 ** 6,
      settlementId: base + 401 * 10 ** 6 + settlementCode * 1000,
      srcObject: 1,
      regionKey: p.key,
      objectCn: cn,
      street: `${street.toUpperCase()}|${streetAbbr}`,
      house,
      apartment,
      addressNotes: `${where || p.region}, ${streetAbbr.toLowerCase()} ${street}, д. ${notesHouse}` + (apartment ? `, ${apartment}` : ''),
      region: p.region,
    };
    for (const [level, value] of [
      ['district', district],
      ['city', cityName],
      ['settlement', settlement],
    ] as const) {
      if (value) object[level] = value;
    }
    REGISTRY.push(object);
  }

  cadastral('NSK', '54:35:101234:81', 'Челюскинцев', 'УЛ', '14||', '81');
  cadastral('NSK', '54:35:101234:82', 'Челюскинцев', 'УЛ', '14||', '82');
  cadastral('NSK', '54:35:000000:6057', 'Татьяны Снежиной', 'УЛ', '39||', '57');
  cadastral('NSK', '54:35:000000:5257', 'Татьяны Снежиной', 'УЛ', '39/1||', '57');
  cadastral('NSK', '54:35:041105:733', 'Красный', 'ПР-КТ', '220||', '9');
  cadastral('NSK', '54:35:051130:902', 'Богдана Хмельницкого', 'УЛ', '8||', '61');
  cadastral('NSK', '54:19:164501:2204', 'Центральная', 'УЛ', '5||', '12', {
    city: '',
    district: 'Новосибирский район',
    settlement: 'Краснообск',
  });
  cadastral('MSK', '77:06:0005011:2376', 'Профсоюзная', 'УЛ', '104||', '215');
  cadastral('MSK', '77:08:0009005:1432', 'Хорошевское', 'Ш', '12||', '44');
  cadastral('MSK', '77:08:0009005:1517', 'Хорошевское', 'Ш', '12|2|', '44');
  cadastral('MSK', '77:08:0010004:2795', 'Маршала Бирюзова', 'УЛ', '32||', '17');
  cadastral('MSK', '77:06:0001003:1578', 'Вавилова', 'УЛ', '81||', '112');
  cadastral('MSK', '77:06:0001003:1579', 'Вавилова', 'УЛ', '81||', '113');
  cadastral('SPB', '78:34:0412501:3140', 'Просвещения', 'ПР-КТ', '87|1|', '140');
  cadastral('SPB', '78:34:0412501:3259', 'Просвещения', 'ПР-КТ', '87|2|', '140');
  cadastral('SPB', '78:34:0004108:5511', 'Савушкина', 'УЛ', '126||', '301');
  cadastral('SPB', '78:34:0004108:5512', 'Савушкина', 'УЛ', '126||', '301');
  cadastral('SPB', '78:34:0004111:2088', 'Савушкина', 'УЛ', '119||', '88');
  cadastral('EKB', '66:41:0702050:4433', 'Малышева', 'УЛ', '120||', '33');
  cadastral('EKB', '66:41:0702009:1841', 'Малышева', 'УЛ', '51||', '12');
  cadastral('EKB', '66:41:0702009:1893', 'Малышева', 'УЛ', '51||', '12');
  cadastral('KZN', '16:50:011301:3398', 'Чистопольская', 'УЛ', '61||', '98');
  cadastral('KZN', '16:50:011109:645', 'Баумана', 'УЛ', '15/2||', '7');
  cadastral('KZN', '16:50:011109:712', 'Баумана', 'УЛ', '15а||', '7');
  cadastral('KZN', '16:50:011109:713', 'Баумана', 'УЛ', '17||', '7');
  cadastral('CRM', '90:22:010217:3512', 'Киевская', 'УЛ', '112||', '45');

  // ---- the bank profile ----

  const PROFILE = {
    organization: {
      name: 'АО «Банк Пример»',
      inn: inn10('770193458'),
      kpp: '770101001',
      ogrn: ogrn('102770004517'),
      regDate: '2002-08-14',
      address: { fiasId: newUuid() },
    },
    representative: {
      representativeType: 'authorized',
      person: {
        surname: 'Григорьева',
        name: 'Елена',
        patronymic: 'Викторовна',
        dateBirth: '1982-05-17',
        birthPlace: 'г. Москва',
        snils: snils('138402715'),
        gender: 'female',
        identityDocument: {
          documentType: 'russPassport',
          series: '45 07',
          number: '318264',
          issueDate: '2007-06-05',
          issuer: { code: '770-093', name: 'ОВД района Хамовники г. Москвы' },
        },
        citizenship: 'Российская Федерация',
        address: { fiasId: newUuid(), apartment: { type: 'кв', name: '14' } },
      },
    },
  };

  // ---- self-check: the sandbox's suggest, then the worker's matching, for every row without a cadastral number ----

  checkSuggest(ROWS, validateRegistry(REGISTRY, 'of the samples'));

  // ---- the files ----

  const counts = new Map<Outcome, number>();
  for (const [, outcome] of ROWS) counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  // Most frequent first; equal counts keep the order of first appearance (a stable sort).
  const summary = [...counts]
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  const table = ROWS.map(([row, outcome, why], i) => `| ${i + 1} | ${row.dealId} | ${outcome} | ${why} |`).join('\n');

  return {
    'deals.csv': [SAMPLE_FIELDS, ...ROWS.map(([row]) => SAMPLE_FIELDS.map((f) => row[f] ?? ''))].map(csvLine).join(''),
    'deals-with-files.csv': dealsWithFiles(
      ROWS.filter(([row, outcome]) => row.cadastralNumber && outcome === 'queued').map(([row]) => row),
    ),
    'agreement-a.pdf': tinyPdf('Sample mortgage agreement A'),
    'agreement-b.pdf': tinyPdf('Sample mortgage agreement B'),
    // A real detached CMS signature of agreement-a.pdf, made once with the test key beside it
    // (test/fixtures/signing/README.md): the load refuses anything that is not a signature's structure.
    'agreement-a.pdf.sig': readFileSync(join(root, 'test', 'fixtures', 'signing', 'agreement-a.pdf.sig')),
    'registry.json': `${JSON.stringify(REGISTRY, null, 2)}\n`,
    'bank-profile.json': `${JSON.stringify(PROFILE, null, 2)}\n`,
    'README.md': readme(summary, table),
  };
}

/**
 * Three deals of the sample that carry their cadastral numbers, by files instead of content
 * ids: the first two share agreement-a.pdf and its signature (uploaded once), the third names
 * agreement-b.pdf unsigned (its docflow waits suspended for signatures).
 */
function dealsWithFiles(rows: readonly Row[]): string {
  const header = [
    ...SAMPLE_FIELDS.filter((f) => f !== 'agreementContentId' && f !== 'agreementSignatureIds'),
    'agreementFile',
    'agreementSignatureFiles',
  ];
  const files = [
    { agreementFile: 'agreement-a.pdf', agreementSignatureFiles: 'agreement-a.pdf.sig' },
    { agreementFile: 'agreement-a.pdf', agreementSignatureFiles: 'agreement-a.pdf.sig' },
    { agreementFile: 'agreement-b.pdf', agreementSignatureFiles: '' },
  ];
  const lines = files.map((f, i) => header.map((h) => ({ ...rows[i], ...f })[h] ?? ''));
  return [header, ...lines].map(csvLine).join('');
}

/** A one-page PDF with a line of text, its cross-reference table's offsets computed. */
function tinyPdf(text: string): string {
  const stream = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(body.length);
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return body;
}

function check(condition: boolean, promise: string): asserts condition {
  if (!condition) throw new Error(`The samples break a promise: ${promise}.`);
}

/** Every row meant to go through suggest meets candidates, and exactly as many equal ones as its outcome needs. */
function checkSuggest(rows: ReadonlyArray<[Row, Outcome, string]>, registry: RegistryObject[]): void {
  const index = indexRegistry(registry);
  const validate = createDealValidator({ today: TODAY });
  for (const [i, [row, outcome]] of rows.entries()) {
    const validation = validate(row);
    if (row.cadastralNumber || outcome === 'invalid') continue;
    const where = `row ${i + 1} (${row.dealId}, ${outcome})`;
    check(validation.ok, `${where} is valid`);
    const parsed = parseSuggestQuery(suggestQuery(validation.deal));
    check('query' in parsed, `${where} makes a suggest request the sandbox accepts`);
    const candidates = JSON.parse(suggest(index, parsed.query)) as SuggestCandidate[];
    const match = matchCandidate(validation.deal, candidates);
    const equal = match.kind === 'found' ? 1 : match.kind === 'ambiguous' ? match.candidates.length : 0;
    const expected = outcome === 'not_found' ? 0 : outcome === 'ambiguous' ? 2 : 1;
    check(
      candidates.length > 0 && equal === expected,
      `${where}: suggest finds ${candidates.length} candidates, ${equal} equal to the row, ${expected} wanted`,
    );
  }
}

/** A CSV line as Python's csv module writes it (excel dialect, minimal quoting, `\n`). */
function csvLine(cells: readonly string[]): string {
  const quoted = cells.map((c) => (/[,"\r\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c));
  return `${cells.length === 1 && cells[0] === '' ? '""' : quoted.join(',')}\n`;
}

function readme(summary: string, table: string): string {
  return `# Samples

Fictional data for the demo and the tests; no real person, bank or object. Written by
\`npm run samples\` (scripts/gen-samples.ts, deterministic): edit the script, not the files.

| file | what it is |
|---|---|
| \`deals.csv\` | 24 deals, UTF-8, comma, a header row of canonical field names ([docs/input-format.md](../docs/input-format.md)) |
| \`deals-with-files.csv\` | 3 deals of \`deals.csv\` whose agreements are files (\`agreementFile\`, \`agreementSignatureFiles\`) instead of content ids: the first two share \`agreement-a.pdf\` and its signature (uploaded once), the third names \`agreement-b.pdf\` unsigned (it ends \`suspended\`) |
| \`agreement-a.pdf\`, \`agreement-b.pdf\`, \`agreement-a.pdf.sig\` | tiny generated PDFs and the detached CMS signature (DER) of \`agreement-a.pdf\`, made with a test key (test/fixtures/signing/, test only) |
| \`bank-profile.json\` | a valid bank profile (\`--profile\`): INN, KPP, OGRN and SNILS with valid check digits |
| \`registry.json\` | the cadastral objects the sandbox's suggest answers from (\`--registry\`), including the two of \`test/fixtures/gateway-examples/suggest-response.json\` under region \`Новосибирский\`, city \`Новосибирск\` |

Demo settings: the sandbox runs with \`--registry samples/registry.json --sessions demo-session
--egron-regions "Республика Крым"\`, and \`realty-batch run samples/deals.csv --profile
samples/bank-profile.json\` runs against it with session \`demo-session\`. Expected outcomes:
${summary} (24 rows).

The expected outcome of every row (row = 1-based record index, header not counted).
\`test/unit/validate-deal.test.ts\` checks that exactly the rows marked \`invalid\` are invalid.

| row | dealId | outcome | why |
|---|---|---|---|
${table}
`;
}

/** Writes every sample file into `dir` (created if missing); returns the files' texts. */
export function writeSamples(dir: string, root = packageRoot()): Samples {
  const samples = generateSamples(root);
  mkdirSync(dir, { recursive: true });
  for (const name of SAMPLE_FILES) writeFileSync(join(dir, name), samples[name]);
  return samples;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = packageRoot();
  const samples = writeSamples(join(root, 'samples'), root);
  const deals = samples['deals.csv'].split('\n').length - 2;
  const objects = (JSON.parse(samples['registry.json']) as unknown[]).length;
  const summary = /Expected outcomes:\n(.*) \(24 rows\)/.exec(samples['README.md'])?.[1] ?? '';
  console.log(`wrote ${deals} deals, ${objects} registry objects; ${summary}`);
}

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfileError } from '../../src/errors.js';
import { loadProfile, parseProfile } from '../../src/input/profile.js';
import type { FieldProblem } from '../../src/domain/deal.js';
import { withPaths } from '../helpers/json-path.js';

const SAMPLE = new URL('../../samples/bank-profile.json', import.meta.url);
const TODAY = { today: new Date(2026, 10, 21) };

type Json = Record<string, unknown>;
let sample: Json;
let dir: string;

beforeAll(async () => {
  sample = JSON.parse(await readFile(SAMPLE, 'utf8')) as Json;
  dir = await mkdtemp(join(tmpdir(), 'profile-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A copy of the sample profile with `path` set to `value` (undefined deletes it). */
function withValue(path: string, value: unknown): Json {
  return withPaths(sample, { [path]: value });
}

function problemsOf(json: unknown): FieldProblem[] {
  const result = parseProfile(json, TODAY);
  if (result.ok) throw new Error('expected an invalid profile');
  return result.problems;
}

describe('parseProfile', () => {
  it('accepts the sample profile and normalises SNILS and passport series', () => {
    const result = parseProfile(sample, TODAY);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.profile.organization).toMatchObject({ name: 'АО «Банк Пример»', inn: '7701934587', ogrn: '1027700045174' });
    expect(result.profile.representative.person.snils).toMatch(/^\d{11}$/);
    expect(result.profile.representative.person.identityDocument.series).toBe('4507');
  });

  it('takes "excel": true or false for the form of the bank\'s results files, and refuses anything else by its path', () => {
    const excel = parseProfile({ ...sample, excel: true }, TODAY);
    expect(excel.ok && excel.profile.excel).toBe(true);
    const plain = parseProfile(sample, TODAY);
    expect(plain.ok && plain.profile.excel).toBeUndefined();
    expect(problemsOf({ ...sample, excel: 'yes' })).toEqual([{ field: 'excel', message: 'must be true or false' }]);
  });

  it('lists a bad INN and a bad SNILS together, each by its JSON path', () => {
    const bad = withValue('organization.inn', '7701934588');
    (bad.representative as { person: Json }).person.snils = '112-233-445 96';
    expect(problemsOf(bad)).toEqual([
      { field: 'organization.inn', message: 'checksum does not match' },
      { field: 'representative.person.snils', message: 'checksum does not match' },
    ]);
  });

  it('accepts the encumbrancer of the published request example (SNILS below the checked range, no issuer code)', async () => {
    const example = JSON.parse(
      await readFile(new URL('../fixtures/gateway-examples/encumbrance-request.json', import.meta.url), 'utf8'),
    ) as {
      options: { whoUseRestriction: { encumbrancer: unknown[] } };
    };
    const result = parseProfile(example.options.whoUseRestriction.encumbrancer[0], TODAY);
    expect(result).toMatchObject({ ok: true, profile: { organization: { inn: '6663003127' } } });
  });

  it.each([
    ['organization.inn', '770193458', 'must be 10 digits'],
    ['organization.inn', '500100732259', 'must be 10 digits'],
    ['organization.kpp', '77010100', 'must be 9 characters: 4 digits, 2 digits or capital Latin letters, 3 digits'],
    ['organization.ogrn', '1027700045175', 'checksum does not match'],
    ['organization.ogrn', '10277000451', 'must be 13 digits (OGRN) or 15 digits (OGRNIP)'],
    ['organization.regDate', '2002-02-30', 'must be a real date (YYYY-MM-DD or DD.MM.YYYY)'],
    ['organization.regDate', '2026-11-22', 'must not be in the future'],
    ['organization.name', '  ', 'is required'],
    ['organization.name', undefined, 'is required'],
    ['organization.inn', 7701934587, 'must be a string'],
    ['organization.address.fiasId', 'e386b6af', 'must be a UUID'],
    ['representative.person.gender', 'unknown', 'must be male or female (or м/ж, M/F)'],
    ['representative.person.dateBirth', '17.05.2082', 'must not be in the future'],
    ['representative.person.identityDocument.number', '31826', 'must be 6 digits for a russPassport number'],
    ['representative.person.identityDocument.series', undefined, 'is required'],
    ['representative.person.identityDocument.issuer.code', '77-0093', 'must be NNN-NNN or NNNNNN'],
    [
      'representative.person.identityDocument.documentType',
      'passport',
      'must be one of russPassport, inostrannyyPassport, vul, voennyyBilet, birthCertificate',
    ],
    ['representative.person.address.apartment.type', 'квартира', 'must be one of кв, ком, пом, бокс'],
  ])('refuses %s = %j: %s', (path, value, message) => {
    expect(problemsOf(withValue(path, value))).toEqual([{ field: path, message }]);
  });

  it('accepts an OGRNIP of 15 digits', () => {
    expect(parseProfile(withValue('organization.ogrn', '304500116000157'), TODAY).ok).toBe(true);
  });

  it('refuses an identity document issued before the birth date', () => {
    expect(problemsOf(withValue('representative.person.identityDocument.issueDate', '1980-01-01'))).toEqual([
      { field: 'representative.person.identityDocument.issueDate', message: 'must not be before dateBirth' },
    ]);
  });

  it('checks the passport series even when another field of the document is missing', () => {
    const bad = withValue('representative.person.identityDocument.series', '45 0');
    delete ((bad.representative as { person: Json }).person.identityDocument as Json).number;
    expect(problemsOf(bad)).toEqual([
      { field: 'representative.person.identityDocument.number', message: 'is required' },
      { field: 'representative.person.identityDocument.series', message: 'must be 4 digits for a russPassport series' },
    ]);
  });

  it('takes a structured address with defaults, and wants fiasId or region', () => {
    const structured = withValue('organization.address', { region: 'Москва', street: { name: 'Тверская' }, house: { name: '7' } });
    const result = parseProfile(structured, TODAY);
    expect(result.ok && result.profile.organization.address).toEqual({
      region: 'Москва',
      street: { name: 'Тверская', abbreviation: 'ул' },
      house: { name: '7', type: 'д' },
    });
    expect(problemsOf(withValue('organization.address', { city: { name: 'Москва' } }))).toEqual([
      { field: 'organization.address', message: 'is required: fiasId, or region' },
    ]);
  });

  it('defaults representativeType to authorized and allows unknown fields, dropping them', () => {
    const extra = withValue('representative.representativeType', undefined);
    extra.comment = 'сделано в 1С';
    (extra.organization as Json).phone = '+7 495 000-00-00';
    const result = parseProfile(extra, TODAY);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.profile.representative.representativeType).toBe('authorized');
    expect('phone' in result.profile.organization).toBe(false);
  });

  it.each(['representative.person', 'representative.person.identityDocument'])('names %s when it is null, without throwing', (path) => {
    expect(problemsOf(withValue(path, null))).toEqual([{ field: path, message: 'is required' }]);
  });

  it('names missing parts and a profile that is not an object', () => {
    expect(problemsOf(withValue('representative', undefined))).toEqual([{ field: 'representative', message: 'is required' }]);
    expect(problemsOf([])).toEqual([{ field: '(profile)', message: 'must be an object' }]);
  });

  it('puts no value of the profile into a message', () => {
    const bad = withValue('representative.person.snils', '138-402-715 49');
    (bad.organization as Json).inn = '7701934588';
    const text = problemsOf(bad)
      .map((p) => `${p.field} ${p.message}`)
      .join('\n');
    expect(text).not.toContain('138');
    expect(text).not.toContain('7701934588');
  });
});

describe('loadProfile', () => {
  it('reads and validates the sample profile', async () => {
    const profile = await loadProfile(fileURLToPath(SAMPLE), TODAY);
    expect(profile.representative.person.surname).toBe('Григорьева');
  });

  it('throws ProfileError with a (file) problem for a missing file', async () => {
    const file = join(dir, 'missing.json');
    const error = await loadProfile(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProfileError);
    expect((error as ProfileError).code).toBe('ERR_PROFILE_INVALID');
    expect((error as ProfileError).problems).toEqual([{ field: '(file)', message: 'cannot be read (ENOENT)' }]);
  });

  it('throws ProfileError for bad JSON without quoting the file', async () => {
    const file = join(dir, 'broken.json');
    await writeFile(file, '{"organization": {"name": "Иванов Иван"');
    const error = await loadProfile(file).catch((e: unknown) => e);
    expect((error as ProfileError).problems).toEqual([{ field: '(file)', message: 'is not valid JSON' }]);
    expect((error as Error).message).not.toContain('Иванов');
  });

  it('throws ProfileError listing every problem of an invalid profile, and reads a BOM', async () => {
    const file = join(dir, 'invalid.json');
    await writeFile(file, `\uFEFF${JSON.stringify(withValue('organization.kpp', 'x'))}`);
    const error = await loadProfile(file, TODAY).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProfileError);
    expect((error as ProfileError).problems.map((p) => p.field)).toEqual(['organization.kpp']);
    expect((error as Error).message).toContain('organization.kpp: must be 9 characters');
  });
});

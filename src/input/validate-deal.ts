/**
 * One raw record (canonical field names, raw strings) to one `Deal`, or every
 * problem of the record (docs/input-format.md, "The fields" and "Rules across fields").
 */
import { splitAddressLine, type AddressCells } from './address-line.js';
import { districtName, regionName, splitSettlement, splitStreet, streetTypeName, type NamedLevel } from './address-levels.js';
import { houseName, housePartNumber, splitApartment, splitHouse } from './address-parts.js';
import type { ApartmentParts, HouseParts } from './address-parts.js';
import type { AppliedDocument, Deal, DealValidation, FieldProblem, Owner, OwnerAddress, RowDocument } from '../domain/deal.js';
import { ownerFieldNames } from './fields.js';
import type { CanonicalField, OwnerFieldSuffix, OwnerPrefix } from './fields.js';
import {
  cadastralNumber,
  convert,
  issuerCode,
  localIsoDate,
  passportNumber,
  passportSeries,
  pastDate,
  positiveDecimal,
  problem,
  snils,
  text,
  uuid,
  UUID,
} from './field-checks.js';
import { Problem, type Field } from './field-checks.js';
import { complete, RecordReader, withoutUndefined, type DealRecord, type Draft } from './record-reader.js';
import { propertyKeyOf } from './property-key.js';
import { SeenIds } from './seen-ids.js';
import { isUnreadable } from './unreadable.js';
import { typeWordKey } from '../domain/address-words.js';
import { apartmentTypeField, areaUnitField, docTypeField, fileTypeField, genderField, objectTypeField } from './value-words.js';

export interface DealValidatorOptions<Own extends object = object> {
  /** The day against which "not in the future" is checked; default: now. */
  today?: Date;
  /**
   * The columns of the docflow type beside the object's and the owners' (src/docflows/): what
   * they add to the deal. Default: a registration's agreement.
   */
  own?: OwnColumns<Own>;
  /**
   * The order the rows belong to (an extract's ledger key, src/docflows/extract/): the day it was
   * ordered (YYYY-MM-DD; default: today), or the batch's id when ordered again on purpose (`--again`).
   */
  order?: string;
}

/** What a type's columns are read against: the check of a past date, and the order an extract's row belongs to. */
export interface OwnContext {
  date: Field<string>;
  /** DealValidatorOptions.order. */
  order: string;
}

/**
 * A docflow type's own columns: read from the record into the deal's own part, `Own` (its fields
 * beside the object's and the owners'; problems reported on the reader, and then nothing).
 */
export interface OwnColumns<Own extends object = object> {
  read(r: RecordReader, context: OwnContext): Own;
  /** false: the rows name no owners (an extract is ordered on the object alone). */
  owners?: boolean;
  /** The object's address may be left out when its cadastral number is given (an extract). */
  addressOptional?: boolean;
}

/** A registration's columns: its mortgage agreement. */
export const AGREEMENT_COLUMNS: OwnColumns<Pick<Deal, 'agreement'>> = {
  read: (r) => ({ agreement: withoutUndefined(readAgreement(r) as AppliedDocument) }),
};

/** A registration's documents: its agreement, with the columns that name its files. */
export function agreementDocuments(deal: Deal): RowDocument[] {
  return deal.agreement ? [{ document: deal.agreement, fileField: 'agreementFile', signatureField: 'agreementSignatureFiles' }] : [];
}

export type { DealRecord };
export type DealValidator<Own extends object = object> = (record: DealRecord) => DealValidation<Own>;

const DEFAULT_STREET_TYPE = 'ул';
const DEFAULT_CITIZENSHIP = 'Российская Федерация';
const DEAL_ID_MAX_LENGTH = 100;

const dealId = convert((value) => {
  if (value.length > DEAL_ID_MAX_LENGTH) return problem(`must be at most ${DEAL_ID_MAX_LENGTH} characters`);
  return /^[^\p{C}]+$/u.test(value) ? value : problem('must contain only printable characters');
});

const signatureIds = convert((value) => {
  const ids = value.split(/[|,\s]+/).filter((id) => id !== '');
  return ids.every((id) => UUID.test(id)) ? ids : problem('must be UUIDs separated by |, comma or space');
});

/** Paths separated by `|` (a path may hold a comma or a space). */
const signatureFiles = convert((value) => {
  const paths = value
    .split('|')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  return paths.length > 0 ? paths : problem('must be file paths separated by |');
});

/** `д. 39`, `39 корп. 1`, `39/1` → its parts, compact (src/input/address-parts.ts). */
const house = convert((value): HouseParts | Problem => {
  const parts = splitHouse(value);
  return typeof parts === 'string' ? problem(parts) : parts;
});
const housePart = convert((value) => housePartNumber(value) || problem('must be a number'));
const apartment = convert((value): ApartmentParts | Problem => {
  const parts = splitApartment(value);
  return parts.name === '' ? problem('must be a flat or premises number (33, кв. 33)') : parts;
});

/** Region and district: their names as the register writes them (`Новосибирская обл.` → `Новосибирская область`). */
const regionField = convert((value) => text.check(regionName(value)));
const districtField = convert((value) => text.check(districtName(value)));
/** A settlement or a street: its name, and the abbreviation of the type word it had (`ул. Ленина` → Ленина, ул). */
const named = (split: (value: string) => NamedLevel): Field<NamedLevel> =>
  convert((value) => {
    const parts = split(value);
    const name = text.check(parts.name);
    return name instanceof Problem ? name : parts;
  });
const settlement = named(splitSettlement);
const street = named(splitStreet);
const streetType = convert((value) => text.check(streetTypeName(value)));
/** Cities that are regions of their own: a city cell that repeats such a region says nothing more. */
const FEDERAL_CITIES = new Set(['москва', 'санкт-петербург', 'севастополь']);
const sameName = (a: string, b: string): boolean => typeWordKey(a) === typeWordKey(b);
const OWNER2_FIELDS = ownerFieldNames('owner2');
/** The object's address columns: an extract's row with none of them names its object by the cadastral number. */
const ADDRESS_FIELDS = ['region', 'district', 'city', 'settlement', 'street', 'house', 'apartment', 'address'] as const;
const NO_ADDRESS = { region: '', streetType: '', house: '', apartmentType: '' } as const;

/**
 * A street cell and its type column: `ул. Ленина` is Ленина, ул; the type its word named
 * wins over none, a type column over the default (ул). Both naming types that differ is a problem.
 */
function readStreet(r: RecordReader, streetField: CanonicalField, typeField: CanonicalField): { street?: string; streetType: string } {
  const cell = r.optional(streetField, street);
  const column = r.optional(typeField, streetType);
  if (cell?.abbreviation !== undefined && column !== undefined && cell.abbreviation !== column)
    r.report(streetField, `names a street type other than ${typeField}`);
  return { street: cell?.name, streetType: cell?.abbreviation ?? column ?? DEFAULT_STREET_TYPE };
}

/**
 * The property's region, district, city or settlement and street. A settlement's word decides its
 * level: `пгт Краснообск` in the city column is a settlement, `г. Бердск` in the settlement column a city.
 */
function readLocation(
  r: RecordReader,
): Draft<Pick<Deal, 'region' | 'district' | 'city' | 'settlement' | 'settlementType' | 'street' | 'streetType'>> {
  const regionName = r.required('region', regionField);
  const district = r.optional('district', districtField);
  let city = r.optional('city', settlement);
  let place = r.optional('settlement', settlement);
  if (city?.abbreviation !== undefined && city.abbreviation !== 'г' && place === undefined) [city, place] = [undefined, city];
  if (place?.abbreviation === 'г' && city === undefined) [city, place] = [place, undefined];
  // `г. Москва` as the region and Москва as the city: the register files Moscow's objects under the region alone.
  if (city && regionName && FEDERAL_CITIES.has(typeWordKey(regionName)) && sameName(city.name, regionName)) city = undefined;
  return {
    region: regionName,
    district,
    city: city?.name,
    settlement: place?.name,
    ...(place?.abbreviation !== undefined && { settlementType: place.abbreviation }),
    ...readStreet(r, 'street', 'streetType'),
  };
}

function readOwnerAddress(r: RecordReader, prefix: OwnerPrefix): OwnerAddress | undefined {
  const before = r.problems.length;
  const field = (suffix: OwnerFieldSuffix): CanonicalField => `${prefix}${suffix}`;
  const [fiasId, region, houseField] = [field('FiasId'), field('Region'), field('House')];
  const flat = r.optional(field('Apartment'), apartment);
  const flatParts = { apartment: flat?.name, apartmentType: flat?.type };
  if (r.has(fiasId)) {
    return complete<OwnerAddress>(r, before, { kind: 'fias', fiasId: r.optional(fiasId, uuid), ...flatParts });
  }
  if (!r.has(region) && !r.has(houseField)) {
    r.report(`${prefix}Address`, `is required: ${fiasId}, or ${region} and ${houseField}`);
    return undefined;
  }
  const ownerHouse = r.optional(houseField, house);
  const ownerStreet = readStreet(r, field('Street'), field('StreetType'));
  const address: Draft<OwnerAddress> = {
    kind: 'structured',
    region: r.optional(region, regionField),
    city: r.optional(field('City'), settlement)?.name,
    ...ownerStreet,
    house: ownerHouse && houseName(ownerHouse.house, ownerHouse.building, ownerHouse.structure),
    ...flatParts,
  };
  for (const missing of [region, houseField].filter((f) => !r.has(f))) r.report(missing, `is required without ${fiasId}`);
  return complete<OwnerAddress>(r, before, address);
}

function readOwner(r: RecordReader, prefix: OwnerPrefix, date: Field<string>): Owner | undefined {
  const before = r.problems.length;
  const field = (suffix: OwnerFieldSuffix): CanonicalField => `${prefix}${suffix}`;
  const person = {
    surname: r.required(field('Surname'), text),
    name: r.required(field('Name'), text),
    patronymic: r.optional(field('Patronymic'), text),
    birthDate: r.required(field('BirthDate'), date),
    birthPlace: r.required(field('BirthPlace'), text),
    snils: r.required(field('Snils'), snils),
    gender: r.required(field('Gender'), genderField),
    citizenship: r.withDefault(field('Citizenship'), text, DEFAULT_CITIZENSHIP),
  };
  const type = r.withDefault(field('DocType'), docTypeField, 'russPassport');
  // Series and number have a fixed form only for a Russian passport; other documents vary.
  const passport = type === 'russPassport';
  const doc: Draft<Owner['doc']> = {
    type,
    series: passport ? r.required(field('DocSeries'), passportSeries) : r.optional(field('DocSeries'), text),
    number: r.required(field('DocNumber'), passport ? passportNumber : text),
    issueDate: r.required(field('DocIssueDate'), date),
    issuerCode: r.optional(field('DocIssuerCode'), issuerCode),
    issuerName: r.required(field('DocIssuerName'), text),
  };
  if (person.birthDate !== undefined && doc.issueDate !== undefined && doc.issueDate < person.birthDate) {
    r.report(field('DocIssueDate'), `must not be before ${field('BirthDate')}`);
  }
  const address = readOwnerAddress(r, prefix);
  return complete<Owner>(r, before, { ...person, doc: withoutUndefined(doc as Owner['doc']), address });
}

/**
 * The property's house, building, structure, apartment and its type, normalised once for
 * suggest, the matcher and the docflow: `д. 39 корп. 1` and `кв. 33` as 39, 1 and 33. A
 * part the house cell names and its own column gives otherwise is a problem of the row.
 */
function readHouseAndApartment(r: RecordReader): Draft<Pick<Deal, 'house' | 'building' | 'structure' | 'apartment' | 'apartmentType'>> {
  const parts = r.required('house', house);
  // Messages name the parts, never their values (docs/input-format.md: no value in a message).
  const inCell = (part: 'building' | 'structure', word: string): string | undefined => {
    const column = r.optional(part, housePart);
    const named = parts?.[part];
    if (named !== undefined && column !== undefined && column !== named) r.report('house', `names a ${word} other than ${part}`);
    return column ?? named;
  };
  const building = inCell('building', 'корпус (building)');
  const structure = inCell('structure', 'строение (structure)');
  const flat = r.optional('apartment', apartment);
  const typeColumn = r.optional('apartmentType', apartmentTypeField);
  if (flat?.type !== undefined && typeColumn !== undefined && flat.type !== typeColumn)
    r.report('apartment', 'names a type (кв, ком, пом, бокс) other than apartmentType');
  return {
    house: parts?.house,
    building,
    structure,
    apartment: flat?.name,
    apartmentType: typeColumn ?? flat?.type ?? 'кв',
  };
}

/**
 * The agreement by content ids, or by files (checked on disk by the load, document-files.ts):
 * one or the other, never both.
 */
function readAgreement(r: RecordReader): Draft<AppliedDocument> {
  const fileType = r.withDefault('agreementFileType', fileTypeField, 'pdf');
  if (!r.has('agreementFile')) {
    if (r.has('agreementSignatureFiles')) r.report('agreementFile', 'is required with agreementSignatureFiles');
    return {
      contentId: r.required('agreementContentId', uuid),
      signatureIds: r.optional('agreementSignatureIds', signatureIds) ?? [],
      fileType,
    };
  }
  for (const ids of ['agreementContentId', 'agreementSignatureIds'] as const)
    if (r.has(ids)) r.report(ids, 'must be empty when agreementFile is given: a row names content ids or files, not both');
  const signatures = r.optional('agreementSignatureFiles', signatureFiles);
  return {
    contentId: undefined,
    signatureIds: [],
    fileType,
    file: { path: r.raw('agreementFile')! },
    ...(signatures && signatures.length > 0 && { signatureFiles: signatures.map((path) => ({ path })) }),
  };
}

/**
 * A dealId an earlier row of the file has: the same property there is a row repeated (it goes
 * with its first row), another one (or one that cannot be told) a deal that needs its own dealId.
 */
function repeatedDealId(firstRow: number, property: 'same' | 'different' | 'unknown'): FieldProblem {
  if (property === 'same')
    return { field: 'dealId', message: `repeats row ${firstRow}: the same dealId for the same property`, kind: 'duplicateRow' };
  const which = property === 'different' ? ', which is for another property' : '';
  return { field: 'dealId', message: `repeats the dealId of row ${firstRow}${which}`, kind: 'dealIdConflict' };
}

/**
 * A combined address cell (`address`, through the mapping) as the cells of the separate columns
 * (src/input/address-line.ts); a column the record has itself wins over the part of the line.
 */
function readAddressLine(record: DealRecord): { record: DealRecord; problem?: string } {
  const line = record.address;
  if (typeof line !== 'string' || line.trim() === '') return { record };
  const cells: AddressCells | string = splitAddressLine(line);
  if (typeof cells === 'string') return { record, problem: cells };
  const filled: Record<string, string | undefined> = { ...record };
  for (const [field, value] of Object.entries(cells)) if (!filled[field]?.trim()) filled[field] = value;
  return { record: filled };
}

/**
 * A validator for the records of one file, in order: it remembers the dealIds it
 * has seen, so that a repeated id rejects every later occurrence.
 */
export function createDealValidator<Own extends object = object>(options: DealValidatorOptions<Own> = {}): DealValidator<Own> {
  const date = pastDate(localIsoDate(options.today ?? new Date()));
  const own: OwnColumns = options.own ?? AGREEMENT_COLUMNS;
  const order = options.order ?? localIsoDate(options.today ?? new Date());
  // dealId → the 1-based row where it first appeared.
  const seen = new SeenIds();
  let row = 0;

  return (record) => {
    row += 1;
    // A record the reader could not make out has empty fields: "is required" for each would only hide its one problem.
    if (isUnreadable(record)) return { ok: false, problems: [] };
    const line = readAddressLine(record);
    const r = new RecordReader(line.record);
    if (line.problem !== undefined) r.report('address', line.problem);
    const id = r.required('dealId', dealId);
    const rawId = r.raw('dealId');
    // A repeated dealId is told after the property is read (it says whether the row is the same
    // property as the first), but stands where the dealId's problems do.
    const dealIdProblems = r.problems.length;

    // An extract's row may name its object by the cadastral number alone.
    const noAddress = own.addressOptional === true && r.has('cadastralNumber') && !ADDRESS_FIELDS.some((f) => r.has(f));
    const property = {
      dealId: id,
      objectType: r.withDefault('objectType', objectTypeField, 'flat'),
      cadastralNumber: r.optional('cadastralNumber', cadastralNumber),
      ...(noAddress ? NO_ADDRESS : { ...readLocation(r), ...readHouseAndApartment(r) }),
      areaValue: r.optional('areaValue', positiveDecimal),
      areaUnit: r.withDefault('areaUnit', areaUnitField, 'кв.м'),
    };
    if (rawId !== undefined) {
      const first = seen.first(rawId, row, propertyKeyOf(property));
      if (first) r.problems.splice(dealIdProblems, 0, repeatedDealId(first.row, first.property));
    }
    const withOwners = own.owners !== false;
    const owner = withOwners ? readOwner(r, 'owner', date) : undefined;
    const joint = withOwners && OWNER2_FIELDS.some((field) => r.has(field));
    const owner2 = joint ? readOwner(r, 'owner2', date) : undefined;
    const ownPart = own.read(r, { date, order });

    // The own part is what `own.read` made of this record: the type's `Own`.
    const deal = complete<Deal>(r, 0, {
      ...property,
      owners: withOwners ? owner && (owner2 ? [owner, owner2] : [owner]) : [],
      ...ownPart,
    }) as (Deal & Own) | undefined;
    return deal === undefined ? { ok: false, problems: r.problems } : { ok: true, deal };
  };
}

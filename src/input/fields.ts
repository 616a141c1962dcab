/**
 * The canonical field names of a deal record (docs/input-format.md): the same keys in
 * CSV headers and JSON records. Owner fields exist twice, `owner*` and `owner2*`.
 */

export const DEAL_FIELDS = [
  'dealId',
  'objectType',
  'cadastralNumber',
  'region',
  'district',
  'city',
  'settlement',
  'street',
  'streetType',
  'house',
  'building',
  'structure',
  'apartment',
  'apartmentType',
  'areaValue',
  'areaUnit',
] as const;

export const OWNER_PREFIXES = ['owner', 'owner2'] as const;
export type OwnerPrefix = (typeof OWNER_PREFIXES)[number];

export const OWNER_FIELD_SUFFIXES = [
  'Surname',
  'Name',
  'Patronymic',
  'BirthDate',
  'BirthPlace',
  'Snils',
  'Gender',
  'Citizenship',
  'DocType',
  'DocSeries',
  'DocNumber',
  'DocIssueDate',
  'DocIssuerCode',
  'DocIssuerName',
  'FiasId',
  'Region',
  'City',
  'Street',
  'StreetType',
  'House',
  'Apartment',
] as const;
export type OwnerFieldSuffix = (typeof OWNER_FIELD_SUFFIXES)[number];

export const AGREEMENT_FIELDS = [
  'agreementContentId',
  'agreementSignatureIds',
  'agreementFileType',
  'agreementFile',
  'agreementSignatureFiles',
] as const;

export type CanonicalField = (typeof DEAL_FIELDS)[number] | `${OwnerPrefix}${OwnerFieldSuffix}` | (typeof AGREEMENT_FIELDS)[number];

export const ownerFieldNames = (prefix: OwnerPrefix): Array<`${OwnerPrefix}${OwnerFieldSuffix}`> =>
  OWNER_FIELD_SUFFIXES.map((suffix) => `${prefix}${suffix}` as const);

/** Every field, in the order a template or a rejects file lists them. */
export const CANONICAL_FIELDS: readonly CanonicalField[] = Object.freeze([
  ...DEAL_FIELDS,
  ...OWNER_PREFIXES.flatMap(ownerFieldNames),
  ...AGREEMENT_FIELDS,
]);

const byLowerCaseName = new Map<string, CanonicalField>(CANONICAL_FIELDS.map((field) => [field.toLowerCase(), field]));

/** The canonical name of a header, matched after trimming and case-insensitively; undefined when unknown. */
export function canonicalFieldName(header: string): CanonicalField | undefined {
  return byLowerCaseName.get(header.trim().toLowerCase());
}

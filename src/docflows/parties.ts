/**
 * What every docflow type of a bank's mortgage desk says the same way: the object and its
 * address, the owners as persons, the bank as the encumbrancer, a document's content
 * pointers (docs/gateway.md; the published examples in test/fixtures/gateway-examples/).
 */
import { houseName } from '../input/address-parts.js';
import type { AppliedDocument, Deal, Owner, OwnerAddress } from '../domain/deal.js';
import type { BankProfile } from '../input/profile.js';
import {
  contentLink,
  type Address,
  type ContentPointer,
  type EncumbranceOptions,
  type Participant,
  type Person,
  type StructuredAddress,
} from '../domain/gateway.js';

/** The object as the register knows it: its type, cadastral number, address and area. */
export function objectOf(deal: Deal, cadastralNumber: string): EncumbranceOptions['object'] {
  const object: EncumbranceOptions['object'] = {
    objectType: deal.objectType,
    cadastralNumber,
    address: propertyAddress(deal),
  };
  if (deal.areaValue) object.area = { value: deal.areaValue, unit: deal.areaUnit };
  return object;
}

/** Whose right the mortgage restricts: the owner, or both spouses. */
export function whoseRightOf(deal: Deal): EncumbranceOptions['whoseRightRestricted'] {
  const participants = deal.owners.map((o): Participant => ({ person: toPerson(o) }));
  return participants.length === 2
    ? { cooperativeOwnership: { spouse1: participants[0]!, spouse2: participants[1]! } }
    : { individualOwnership: { owner: participants[0]! } };
}

/** The bank, as the one encumbrancer. */
export function encumbrancerOf(profile: BankProfile): EncumbranceOptions['whoUseRestriction'] {
  const { representativeType, person } = profile.representative;
  return { encumbrancer: [{ organization: profile.organization, representative: { representativeType, person } }] };
}

/** A document's content and its signatures' pointers; `what` names it in the error of a row whose file was not uploaded. */
export function contentOf(
  document: AppliedDocument,
  baseUrl: string,
  what: string,
): { info: { type: string; contentPointer: ContentPointer }; signatures?: ContentPointer[] } {
  const pointer = (id: string): ContentPointer => ({ id, contentLink: contentLink(baseUrl, id) });
  // A row that named files has its content ids once they are uploaded (upload-documents.ts).
  if (document.contentId === undefined) throw new Error(`${what} has no content id: its file was not uploaded`);
  const content: ReturnType<typeof contentOf> = { info: { type: document.fileType, contentPointer: pointer(document.contentId) } };
  if (document.signatureIds.length > 0) content.signatures = document.signatureIds.map(pointer);
  return content;
}

export function propertyAddress(deal: Deal): StructuredAddress {
  const address: StructuredAddress = { region: deal.region };
  const locality = deal.city ?? deal.settlement;
  // A settlement's own type when its row named one (рп, пгт, с, д), else the register's generic п.
  if (locality) address.city = { name: locality, abbreviation: deal.city ? 'г' : (deal.settlementType ?? 'п') };
  if (deal.street) address.street = { name: deal.street, abbreviation: deal.streetType };
  address.house = { name: houseName(deal.house, deal.building, deal.structure), type: 'д' };
  if (deal.apartment) address.apartment = { type: deal.apartmentType, name: deal.apartment };
  return address;
}

function ownerAddress(a: OwnerAddress): Address {
  if (a.kind === 'fias') {
    return a.apartment ? { fiasId: a.fiasId, apartment: { type: a.apartmentType ?? 'кв', name: a.apartment } } : { fiasId: a.fiasId };
  }
  const address: StructuredAddress = { region: a.region };
  if (a.city) address.city = { name: a.city, abbreviation: 'г' };
  if (a.street) address.street = { name: a.street, abbreviation: a.streetType };
  address.house = { name: a.house, type: 'д' };
  if (a.apartment) address.apartment = { type: a.apartmentType ?? 'кв', name: a.apartment };
  return address;
}

export function toPerson(o: Owner): Person {
  const person: Person = {
    name: o.name,
    surname: o.surname,
    dateBirth: o.birthDate,
    birthPlace: o.birthPlace,
    snils: o.snils,
    gender: o.gender,
    identityDocument: {
      documentType: o.doc.type,
      number: o.doc.number,
      issueDate: o.doc.issueDate,
      issuer: o.doc.issuerCode ? { code: o.doc.issuerCode, name: o.doc.issuerName } : { name: o.doc.issuerName },
    },
    citizenship: o.citizenship,
    address: ownerAddress(o.address),
  };
  if (o.patronymic) person.patronymic = o.patronymic;
  if (o.doc.series) person.identityDocument.series = o.doc.series;
  return person;
}

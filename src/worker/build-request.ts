/**
 * The `encumbrance_request` a deal becomes, in the shape of the contract (docs/gateway.md) and
 * the published example. Its requestId is the one the ledger gave the try
 * (src/ledger/entry.ts: the bank, the dealId and the resubmission number).
 */
import { houseName } from '../input/address-parts.js';
import type { Deal, Owner, OwnerAddress } from '../input/deal.js';
import type { BankProfile } from '../input/profile.js';
import { requestIdOf } from '../ledger/entry.js';
import {
  contentLink,
  type Address,
  type DocflowRequest,
  type EncumbranceOptions,
  type Participant,
  type Person,
  type StructuredAddress,
} from '../realty/types.js';

export function buildEncumbranceRequest(
  deal: Deal,
  cadastralNumber: string,
  profile: BankProfile,
  baseUrl: string,
  requestId: string = requestIdOf(profile.organization.inn, deal.dealId),
): DocflowRequest<EncumbranceOptions> {
  const participants = deal.owners.map((o): Participant => ({ person: toPerson(o) }));
  const whoseRightRestricted: EncumbranceOptions['whoseRightRestricted'] =
    participants.length === 2
      ? { cooperativeOwnership: { spouse1: participants[0]!, spouse2: participants[1]! } }
      : { individualOwnership: { owner: participants[0]! } };

  const pointer = (id: string) => ({ id, contentLink: contentLink(baseUrl, id) });
  // A row that named files has its content ids once they are uploaded (upload-documents.ts).
  if (deal.agreement.contentId === undefined) throw new Error('the agreement has no content id: its file was not uploaded');
  const content: EncumbranceOptions['appliedDocuments']['mortgageAgreement']['content'] = {
    info: { type: deal.agreement.fileType, contentPointer: pointer(deal.agreement.contentId) },
  };
  if (deal.agreement.signatureIds.length > 0) content.signatures = deal.agreement.signatureIds.map(pointer);

  const object: EncumbranceOptions['object'] = {
    objectType: deal.objectType,
    cadastralNumber,
    address: propertyAddress(deal),
  };
  if (deal.areaValue) object.area = { value: deal.areaValue, unit: deal.areaUnit };

  return {
    requestId,
    options: {
      encumbranceType: 'mortgage',
      object,
      whoseRightRestricted,
      whoUseRestriction: {
        encumbrancer: [{ organization: profile.organization, representative: profile.representative }],
      },
      appliedDocuments: { mortgageAgreement: { documentType: 'mortgageAgreement', content } },
    },
  };
}

function propertyAddress(deal: Deal): StructuredAddress {
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

function toPerson(o: Owner): Person {
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

/**
 * A deal as the worker side sees it: one validated, normalised input record
 * (docs/input-format.md). Dates are YYYY-MM-DD, SNILS digits only, gender
 * male/female, optional fields absent rather than empty.
 */

export const OBJECT_TYPES = ['flat', 'room', 'landPlot', 'structure', 'unfinishedObject'] as const;
export type ObjectType = (typeof OBJECT_TYPES)[number];

export const APARTMENT_TYPES = ['кв', 'ком', 'пом', 'бокс'] as const;
export const AREA_UNITS = ['кв.м', 'га'] as const;
export const DOC_TYPES = ['russPassport', 'inostrannyyPassport', 'vul', 'voennyyBilet', 'birthCertificate'] as const;

export type OwnerAddress =
  | { kind: 'fias'; fiasId: string; apartment?: string; apartmentType?: string }
  | {
      kind: 'structured';
      region: string;
      city?: string;
      street?: string;
      streetType: string;
      /** One name: `39 к1 стр2` when the cell named a building or structure. */
      house: string;
      apartment?: string;
      /** The type the apartment cell's word named (`ком. 5`); `кв` when absent. */
      apartmentType?: string;
    };

export interface Owner {
  surname: string;
  name: string;
  patronymic?: string;
  birthDate: string;
  birthPlace: string;
  snils: string;
  gender: 'male' | 'female';
  citizenship: string;
  doc: {
    type: string;
    series?: string;
    number: string;
    issueDate: string;
    issuerCode?: string;
    issuerName: string;
  };
  address: OwnerAddress;
}

export interface Deal {
  dealId: string;
  objectType: ObjectType;
  cadastralNumber?: string;
  region: string;
  district?: string;
  city?: string;
  settlement?: string;
  /** The settlement's type as the register abbreviates it (`пгт`, `рп`, `с`, `д`, `п`), when the row's word named one. */
  settlementType?: string;
  street?: string;
  streetType: string;
  house: string;
  building?: string;
  structure?: string;
  apartment?: string;
  apartmentType: string;
  /** Decimal with a dot, as the API wants it ("45.6"). */
  areaValue?: string;
  areaUnit: string;
  /** One owner, or two spouses (cooperativeOwnership); none for an extract (ordered on the object alone). */
  owners: [] | [Owner] | [Owner, Owner];
  /** A registration's mortgage agreement (`encumbrance_request`). */
  agreement?: AppliedDocument;
  /** A lift's own fields (`cessation_encumbrance_request`). */
  lift?: LiftFields;
  /** An extract's own fields (`object_request`). */
  extract?: ExtractFields;
}

export const EXTRACT_TYPES = ['info', 'base', 'ownership'] as const;

/** What an extract's row orders: which extract, and its order (with the dealId, the ledger's key). */
export interface ExtractFields {
  extractType: (typeof EXTRACT_TYPES)[number];
  /** The day of the order (YYYY-MM-DD), or the batch's id when ordered `--again`: the same extract of a deal is ordered once an order. */
  order: string;
}

/** A document a docflow applies: by content ids, or by files the load checks and a worker uploads. */
export interface AppliedDocument {
  /** The uploaded document's content id; absent when the row names its file instead. */
  contentId?: string;
  signatureIds: string[];
  fileType: 'pdf' | 'xml';
  /** Its file (`agreementFile`, one of `otherDocumentFiles`): uploaded through `/contents` before the docflow. */
  file?: DocumentFile;
  /** Its detached signatures' files (`agreementSignatureFiles`, the `.sig` beside another document). */
  signatureFiles?: DocumentFile[];
  /** Until the load looked: a `<file>.sig` beside the file, when there is one, is its signature (a lift's other documents). */
  signatureBeside?: boolean;
}

export const ENCUMBRANCE_TYPES = ['mortgage', 'mortgageInLaw'] as const;

/** What a lift adds to the object and its owners: the registry's record of the mortgage it lifts. */
export interface LiftFields {
  encumbranceType: (typeof ENCUMBRANCE_TYPES)[number];
  recordNumber: string;
  /** YYYY-MM-DD. */
  recordDate: string;
  /** `otherDocumentFiles`: the bank's further documents (a statement that the loan is repaid). */
  documents: AppliedDocument[];
}

/** A row's document, with the columns that name its file and its signatures (the load's and the upload's problems name them). */
export interface RowDocument {
  document: AppliedDocument;
  fileField: string;
  signatureField: string;
}

/** The deal with its documents' uploaded content ids (one a document, in rowDocuments' order) in place of their files. */
export function withUploaded(deal: Deal, uploaded: ReadonlyArray<{ contentId: string; signatureIds: string[] }>): Deal {
  const copy: Deal = { ...deal };
  if (deal.agreement) copy.agreement = { ...deal.agreement };
  if (deal.lift) copy.lift = { ...deal.lift, documents: deal.lift.documents.map((d) => ({ ...d })) };
  rowDocuments(copy).forEach(({ document }, i) => {
    const ids = uploaded[i];
    if (ids) Object.assign(document, ids);
  });
  return copy;
}

/** Whether a row names files (the load checks them, a worker uploads them) rather than content ids only. */
export function namesFiles(deal: Deal): boolean {
  return rowDocuments(deal).some(({ document }) => document.file !== undefined || document.signatureFiles !== undefined);
}

/** The documents a row applies, in the order they are uploaded: its agreement, a lift's other documents. */
export function rowDocuments(deal: Deal): RowDocument[] {
  const documents: RowDocument[] = [];
  if (deal.agreement) documents.push({ document: deal.agreement, fileField: 'agreementFile', signatureField: 'agreementSignatureFiles' });
  for (const document of deal.lift?.documents ?? [])
    documents.push({ document, fileField: 'otherDocumentFiles', signatureField: 'otherDocumentFiles' });
  return documents;
}

/**
 * A file a row names. The validator gives only `path` (as the cell wrote it); the load's
 * file checks (src/input/document-files.ts) make it absolute and add the rest.
 */
export interface DocumentFile {
  path: string;
  /** The Content-Type it is uploaded with: application/pdf, application/xml, a signature's. */
  contentType?: string;
  size?: number;
  /** Hex; the key under which its upload is remembered, so that the same bytes go up once a batch. */
  sha256?: string;
  /**
   * Its inode number as the load saw it: the file a worker opens must be that one, not another
   * put at its name since. (Not the device number: a share mounted on several hosts has another on each.)
   */
  inode?: number;
}

/** One problem of one field of one record: `field: message` in rejects and results. */
export interface FieldProblem {
  field: string;
  message: string;
  /**
   * A dealId an earlier row of the file has: for another property (or one that cannot be
   * told), or for the same one (the row is a repeat). The outcome's error code says which.
   */
  kind?: 'dealIdConflict' | 'duplicateRow';
}

export type DealValidation = { ok: true; deal: Deal } | { ok: false; problems: FieldProblem[] };

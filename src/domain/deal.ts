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
  /**
   * A registration's mortgage agreement (`encumbrance_request`): canonical columns, read by the
   * validator when no type says otherwise (src/input/validate-deal.ts). Every other type's own
   * fields are its module's (src/docflows/<type>/): a deal of that type is `Deal & Own`.
   */
  agreement?: AppliedDocument;
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

/** A row's document, with the columns that name its file and its signatures (the load's and the upload's problems name them). */
export interface RowDocument {
  document: AppliedDocument;
  fileField: string;
  signatureField: string;
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
  /**
   * Its change time (ctime, ms) as the load saw it, kept only when it was at least
   * CHANGE_TIME_SETTLED_MS older than the load's read (settledChangeTimeMs): every write to
   * the file moves it after that, and no tool can set it back. The same at a worker's open, the
   * bytes are the load's and are hashed once, as they stream (verified-file.ts).
   */
  changedAtMs?: number;
}

/** A file as the load's checks fill it in: everything but a change time that had not settled. */
export type CheckedDocumentFile = Required<Omit<DocumentFile, 'changedAtMs'>> & Pick<DocumentFile, 'changedAtMs'>;

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

/** A record's deal, with its type's own fields (`Own`, src/docflows/<type>/), or its problems. */
export type DealValidation<Own extends object = object> = { ok: true; deal: Deal & Own } | { ok: false; problems: FieldProblem[] };

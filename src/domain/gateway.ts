/**
 * The gateway contract as types and response schemas (its published examples are in
 * test/fixtures/gateway-examples).
 * The sandbox and the worker side share this file and nothing else.
 */
import * as z from 'zod';

export const API_PREFIX = '/realty/v1';
export const SUGGEST_PATH = `${API_PREFIX}/location/cadastre/suggest`;
export const docflowPath = (docflowType: string): string => `${API_PREFIX}/docflows/${encodeURIComponent(docflowType)}`;
export const CONTENTS_PATH = `${API_PREFIX}/contents`;
/** `POST /contents`' answer (realty-api-notes.md): the uploaded content's pointer. */
export const contentPointerSchema = z.looseObject({ id: z.string().min(1), contentLink: z.string() });
export const contentLink = (baseUrl: string, contentId: string): string =>
  `${baseUrl.replace(/\/+$/, '')}${API_PREFIX}/contents/${contentId}`;

/** `AA:BB:CCCCCC[C]:N...`: district, area, quarter (6 or 7 digits), object number. */
export const CADASTRAL_NUMBER = /^\d{2}:\d{2}:\d{6,7}:\d+$/;

// ---- Suggest (docs/gateway.md, "Suggest") ----

export interface NamedLevel {
  name: string;
}

export interface SuggestRequest {
  region: NamedLevel;
  autonomousCounty?: NamedLevel;
  district?: NamedLevel;
  city?: NamedLevel;
  settlement?: NamedLevel;
  street?: NamedLevel;
  /** `sructureNumber` is spelled so by the contract. */
  house?: { number?: string; buildingNumber?: string; sructureNumber?: string };
  room?: { number?: string };
}

/** Ids are 12-digit integers: they fit a JS number exactly, so no schema may coerce them. */
export const suggestCandidateSchema = z.looseObject({
  objectId: z.string(),
  subjectId: z.number().int(),
  regionId: z.number().int(),
  settlementId: z.number().int(),
  srcObject: z.number().int(),
  regionKey: z.number().int(),
  objectCn: z.string(),
  street: z.string(),
  house: z.string(),
  apartment: z.string(),
  addressNotes: z.string(),
});
export type SuggestCandidate = z.infer<typeof suggestCandidateSchema>;
export const suggestResponseSchema = z.array(suggestCandidateSchema);

// ---- Docflows (docs/gateway.md, "Creating a docflow") ----

export const DOCFLOW_TYPE = 'encumbrance_request';

/**
 * The docflow types of the gateway's contract (docs/gateway.md), the path's last part at
 * creation. A row's type is a module of src/docflows/, which also gives its code in our
 * requestIds (src/docflows/registry.ts); the sandbox knows them by these names alone.
 */
export const DOCFLOW_TYPES = [
  'encumbrance_request',
  'cessation_encumbrance_request',
  'object_request',
  'additional_packet_request',
  'action_request',
] as const;
export type DocflowType = (typeof DOCFLOW_TYPES)[number];

export interface StructuredAddress {
  region: string;
  city?: { name: string; abbreviation: string };
  street?: { name: string; abbreviation: string };
  house?: { name: string; type: string };
  apartment?: { type: string; name: string };
}
export interface FiasAddress {
  fiasId: string;
  apartment?: { type: string; name: string };
}
export type Address = StructuredAddress | FiasAddress;

export interface IdentityDocument {
  documentType: string;
  type?: string;
  series?: string;
  number: string;
  issueDate: string;
  issuer: { code?: string; name: string };
}

export interface Person {
  name: string;
  surname: string;
  patronymic?: string;
  dateBirth: string;
  birthPlace: string;
  snils: string;
  gender: 'male' | 'female';
  identityDocument: IdentityDocument;
  citizenship: string;
  address: Address;
}

export interface Organization {
  name: string;
  inn: string;
  kpp: string;
  ogrn: string;
  regDate: string;
  address: Address;
}

export interface Participant {
  person: Person;
}

export interface ContentPointer {
  id: string;
  contentLink: string;
}

export interface EncumbranceOptions {
  encumbranceType: 'mortgage';
  object: {
    objectType: string;
    cadastralNumber: string;
    address: StructuredAddress;
    area?: { value: string; unit: string };
  };
  whoseRightRestricted:
    { individualOwnership: { owner: Participant } } | { cooperativeOwnership: { spouse1: Participant; spouse2: Participant } };
  whoUseRestriction: {
    encumbrancer: Array<{
      organization: Organization;
      representative: { representativeType: string; person: Person };
    }>;
  };
  appliedDocuments: {
    mortgageAgreement: {
      documentType: 'mortgageAgreement';
      content: {
        info: { type: string; contentPointer: ContentPointer };
        signatures?: ContentPointer[];
      };
    };
  };
}

/** An applied document's content and its signatures. */
export interface DocumentContent {
  info: { type: string; contentPointer: ContentPointer };
  signatures?: ContentPointer[];
}

/** The bank's representative acting by a power of attorney (`representativeType: confidant`). */
export interface Attorney {
  type: 'powerOfAttorneyBankRepresentative';
  appliedDocument: DocumentContent;
}

/** `cessation_encumbrance_request`: lift a mortgage (docs/gateway.md). */
export interface CessationOptions {
  encumbranceType: 'mortgage' | 'mortgageInLaw';
  object: EncumbranceOptions['object'];
  registrationRecord: { number: string; date: string };
  whoseRightRestricted: EncumbranceOptions['whoseRightRestricted'];
  whoUseRestriction: {
    encumbrancer: Array<{
      organization: Organization;
      representative: { representativeType: string; person: Person; attorney?: Attorney };
    }>;
  };
  appliedDocuments: { other: Array<{ documentType: 'other'; content: DocumentContent }> };
}

export interface DocflowRequest<O = EncumbranceOptions> {
  requestId?: string;
  options: O;
}

/** The contract names the field `type`; the public pages call it `docflowType`: read either. */
export const docflowResponseSchema = z
  .looseObject({
    docflowId: z.string().min(1),
    type: z.string().optional(),
    docflowType: z.string().optional(),
    state: z.string(),
  })
  .transform((d) => ({ ...d, type: d.type ?? d.docflowType ?? '' }));
export type DocflowResponse = z.output<typeof docflowResponseSchema>;

// ---- Errors (docs/gateway.md, "The Error object") ----

export interface ApiErrorBody {
  code?: string;
  message?: string;
  target?: string;
  context?: Record<string, unknown>;
  errors?: ApiErrorBody[];
}

/** Any subset of the fields, unknown extras accepted, nested errors of the same shape. */
export const apiErrorBodySchema: z.ZodType<ApiErrorBody> = z.lazy(() =>
  z.looseObject({
    code: z.string().optional(),
    message: z.string().optional(),
    target: z.string().optional(),
    context: z.record(z.string(), z.unknown()).optional(),
    errors: z.array(apiErrorBodySchema).optional(),
  }),
);

// ---- A docflow's life after creation (docs/gateway.md, "A docflow after its creation") ----

/** The states the public documentation names; a client must still accept any other string. */
export const DOCFLOW_STATES = ['queued', 'sent', 'suspended', 'completed', 'error'] as const;
export type DocflowState = (typeof DOCFLOW_STATES)[number];

export const docflowPathOf = (docflowId: string): string => `${API_PREFIX}/docflows/${encodeURIComponent(docflowId)}`;
export const docflowFilePath = (docflowId: string, fileId: string): string =>
  `${docflowPathOf(docflowId)}/files/${encodeURIComponent(fileId)}`;
export const fileSignaturesPath = (docflowId: string, fileId: string): string => `${docflowFilePath(docflowId, fileId)}/signatures`;

/** A file of a docflow: an application to sign, a result, or a result's signature. */
export const docflowFileSchema = z.looseObject({
  id: z.string().min(1),
  contentLink: z.string().optional(),
  type: z.string().optional(),
});
export type DocflowFile = z.infer<typeof docflowFileSchema>;

/** One signer of a signature requirement: who (as the gateway shows it) and the files they sign. */
export const signatureRequirementSchema = z.looseObject({
  person: z.looseObject({}).optional(),
  files: z.array(docflowFileSchema),
});
export type SignatureRequirement = z.infer<typeof signatureRequirementSchema>;

/** The state duty: a payment identifier (УИН), the amount and who pays. */
export const paymentRequirementSchema = z.looseObject({
  uin: z.string().min(1),
  amount: z.union([z.number(), z.string()]).optional(),
  payer: z.union([z.string(), z.looseObject({})]).optional(),
});
export type PaymentRequirement = z.infer<typeof paymentRequirementSchema>;

/** What a `suspended` docflow waits for: `{"signature": [...]}` or `{"payment": [...]}`, or both. */
export const requirementsSchema = z.looseObject({
  signature: z.array(signatureRequirementSchema).optional(),
  payment: z.array(paymentRequirementSchema).optional(),
});
export type DocflowRequirements = z.infer<typeof requirementsSchema>;

/** A result file (the register's extract) with its detached signatures, each a file of its own. */
export const resultFileSchema = docflowFileSchema.extend({
  signatures: z.array(docflowFileSchema).optional(),
});
export type ResultFile = z.infer<typeof resultFileSchema>;

export const docflowResultSchema = z.looseObject({
  files: z.array(resultFileSchema).optional(),
});
export type DocflowResult = z.infer<typeof docflowResultSchema>;

/** Why a docflow ended in `error`: the gateway's Error object. */
export const docflowErrorSchema = apiErrorBodySchema;

/** `GET /docflows/{id}` and `POST /docflows/{id}` (send): the docflow as it is now. */
export const docflowSchema = z
  .looseObject({
    docflowId: z.string().min(1),
    type: z.string().optional(),
    docflowType: z.string().optional(),
    userId: z.string().optional(),
    state: z.string(),
    requestId: z.string().optional(),
    requirements: requirementsSchema.optional(),
    error: docflowErrorSchema.optional(),
    result: docflowResultSchema.optional(),
  })
  .transform((d) => ({ ...d, type: d.type ?? d.docflowType ?? '' }));
export type Docflow = z.output<typeof docflowSchema>;

// ---- The news feed (docs/gateway.md, "The news feed"; not in the contract's sections) ----

export const NEWS_PATH = `${API_PREFIX}/news`;

/**
 * A docflow as a news item carries it: the creation's `requestId` is how a lost answer is
 * found again. A `requirements`, `error` or `result` that does not have the documented shape
 * is dropped from the item (its state stays; `GET /docflows/{id}` reads it whole): one odd
 * item must not stop a follower on its page for ever.
 */
export const newsDocflowSchema = z.looseObject({
  docflowId: z.string().min(1),
  docflowType: z.string().optional(),
  type: z.string().optional(),
  userId: z.string().optional(),
  state: z.string(),
  requestId: z.string().optional(),
  requirements: requirementsSchema.optional().catch(undefined),
  error: docflowErrorSchema.optional().catch(undefined),
  result: docflowResultSchema.optional().catch(undefined),
});
export type NewsDocflow = z.infer<typeof newsDocflowSchema>;

export const newsItemSchema = z.looseObject({
  /** Opaque; `GET /news?after=<token>` answers the items after it, in order. */
  token: z.string().min(1),
  /** When the event happened (ISO 8601). */
  date: z.string(),
  docflow: newsDocflowSchema,
});
export type NewsItem = z.infer<typeof newsItemSchema>;

/** `GET /news?after=<token>`; without `after` the feed starts from now (no items, the newest token). */
export const newsPageSchema = z.looseObject({
  news: z.array(newsItemSchema),
  lastToken: z.string().min(1),
});
export type NewsPage = z.infer<typeof newsPageSchema>;

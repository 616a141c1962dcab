/**
 * A plain check of the news feed's page, ahead of newsPageSchema (src/domain/gateway.ts). It
 * accepts only what the schema accepts as it is (never more: the tests hold both to the same
 * samples); a page it refuses, or one whose `requirements`, `error` or `result` the schema
 * would drop, goes to the schema, which decides. zod copied every item and its nested
 * objects and ran a check per field: a follower reading a backlog checks 100 items a page.
 */
import type { NewsPage } from '../domain/gateway.js';

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';
const isToken = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
const every = (v: unknown, check: (x: unknown) => boolean): boolean => Array.isArray(v) && v.every(check);
const optionalEvery = (v: unknown, check: (x: unknown) => boolean): boolean => v === undefined || every(v, check);

/** docflowFileSchema. */
const isFile = (f: unknown): boolean => isObject(f) && isToken(f.id) && isOptionalString(f.contentLink) && isOptionalString(f.type);

/** resultFileSchema: a file and its signatures. */
const isResultFile = (f: unknown): boolean => isFile(f) && optionalEvery((f as Loose).signatures, isFile);

/** docflowResultSchema. */
const isResult = (r: unknown): boolean => isObject(r) && optionalEvery(r.files, isResultFile);

/** signatureRequirementSchema. */
const isSigner = (s: unknown): boolean => isObject(s) && (s.person === undefined || isObject(s.person)) && every(s.files, isFile);

/** paymentRequirementSchema. */
const isPayment = (p: unknown): boolean =>
  isObject(p) &&
  isToken(p.uin) &&
  (p.amount === undefined || typeof p.amount === 'string' || (typeof p.amount === 'number' && Number.isFinite(p.amount))) &&
  (p.payer === undefined || typeof p.payer === 'string' || isObject(p.payer));

/** requirementsSchema. */
const isRequirements = (r: unknown): boolean => isObject(r) && optionalEvery(r.signature, isSigner) && optionalEvery(r.payment, isPayment);

/** apiErrorBodySchema, nested errors included. */
const isError = (e: unknown): boolean =>
  isObject(e) &&
  isOptionalString(e.code) &&
  isOptionalString(e.message) &&
  isOptionalString(e.target) &&
  (e.context === undefined || isObject(e.context)) &&
  optionalEvery(e.errors, isError);

/** newsItemSchema, with every optional part as the schema keeps it (none it would drop). */
function isItem(item: unknown): boolean {
  if (!isObject(item) || !isToken(item.token) || typeof item.date !== 'string') return false;
  const d = item.docflow;
  return (
    isObject(d) &&
    isToken(d.docflowId) &&
    typeof d.state === 'string' &&
    isOptionalString(d.docflowType) &&
    isOptionalString(d.type) &&
    isOptionalString(d.userId) &&
    isOptionalString(d.requestId) &&
    (d.requirements === undefined || isRequirements(d.requirements)) &&
    (d.error === undefined || isError(d.error)) &&
    (d.result === undefined || isResult(d.result))
  );
}

/** The page as it came when newsPageSchema would answer it unchanged; undefined when the schema must decide. */
export function fastNewsPage(json: unknown): NewsPage | undefined {
  if (!isObject(json) || !isToken(json.lastToken) || !Array.isArray(json.news)) return undefined;
  for (const item of json.news) if (!isItem(item)) return undefined;
  return json as NewsPage;
}

/**
 * Plain checks of the two answers every deal reads (suggest's candidates, the created
 * docflow), ahead of their zod schemas in src/domain/gateway.ts. Each accepts only what its
 * schema accepts (never more: the tests hold both to the same samples); an answer it
 * refuses goes to the schema, which decides and names what is wrong. zod copies every
 * object and runs a check per field, on the path every deal takes.
 */
import type { DocflowResponse, SuggestCandidate } from '../domain/gateway.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v);
const isString = (v: unknown): boolean => typeof v === 'string';
const isOptionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** suggestCandidateSchema's fields, plainly: the candidate as it came (unknown fields kept, as its loose schema keeps them). */
function isCandidate(c: unknown): c is SuggestCandidate {
  return (
    isObject(c) &&
    isString(c.objectId) &&
    isInt(c.subjectId) &&
    isInt(c.regionId) &&
    isInt(c.settlementId) &&
    isInt(c.srcObject) &&
    isInt(c.regionKey) &&
    isString(c.objectCn) &&
    isString(c.street) &&
    isString(c.house) &&
    isString(c.apartment) &&
    isString(c.addressNotes)
  );
}

/** suggestResponseSchema's answer, or undefined when the schema must decide. */
export function fastSuggestResponse(json: unknown): SuggestCandidate[] | undefined {
  if (!Array.isArray(json)) return undefined;
  for (const c of json) if (!isCandidate(c)) return undefined;
  return json as SuggestCandidate[];
}

/** docflowResponseSchema's output (its `type` read from `type` or `docflowType`), or undefined when the schema must decide. */
export function fastDocflowResponse(json: unknown): DocflowResponse | undefined {
  if (
    !isObject(json) ||
    typeof json.docflowId !== 'string' ||
    json.docflowId.length === 0 ||
    !isOptionalString(json.type) ||
    !isOptionalString(json.docflowType) ||
    !isString(json.state)
  )
    return undefined;
  return { ...json, type: (json.type as string | undefined) ?? (json.docflowType as string | undefined) ?? '' } as DocflowResponse;
}

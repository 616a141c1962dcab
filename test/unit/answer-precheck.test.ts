import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fastDocflowResponse, fastSuggestResponse } from '../../src/realty/answer-precheck.js';
import { docflowResponseSchema, suggestResponseSchema } from '../../src/domain/gateway.js';

const EXAMPLE = JSON.parse(readFileSync(new URL('../fixtures/gateway-examples/suggest-response.json', import.meta.url), 'utf8')) as Array<
  Record<string, unknown>
>;
const ONE = EXAMPLE[0]!;

/** Answers the plain checks meet: each either passes both ways alike, or is left to zod. */
const SUGGEST_ANSWERS: unknown[] = [
  EXAMPLE,
  [],
  [{ ...ONE, extra: { any: 'thing' } }],
  [{ ...ONE, subjectId: 1.5 }],
  [{ ...ONE, subjectId: '150000000000' }],
  [{ ...ONE, regionKey: 2 ** 60 }],
  [{ ...ONE, objectCn: null }],
  [{ ...ONE, addressNotes: undefined }],
  [ONE, null],
  [ONE, [ONE]],
  { 0: ONE },
  'text',
  null,
  undefined,
];

const DOCFLOW_ANSWERS: unknown[] = [
  { docflowId: 'd-1', type: 'encumbrance_request', state: 'queued' },
  { docflowId: 'd-1', docflowType: 'encumbrance_request', state: 'queued', extra: 1 },
  { docflowId: 'd-1', state: 'queued' },
  { docflowId: 'd-1', type: 'a', docflowType: 'b', state: 'queued' },
  { docflowId: '', state: 'queued' },
  { docflowId: 'd-1', type: 7, state: 'queued' },
  { docflowId: 'd-1', docflowType: null, state: 'queued' },
  { docflowId: 'd-1' },
  { docflowId: 5, state: 'queued' },
  [{ docflowId: 'd-1', state: 'queued' }],
  null,
  'queued',
];

describe('the plain checks of the answers every deal reads', () => {
  it('accept only what the zod schema accepts, and give what it gives', () => {
    let accepted = 0;
    for (const answer of SUGGEST_ANSWERS) {
      const fast = fastSuggestResponse(answer);
      const zod = suggestResponseSchema.safeParse(answer);
      if (fast !== undefined) {
        accepted++;
        expect(zod.success).toBe(true);
        expect(fast).toEqual(zod.data);
      }
    }
    for (const answer of DOCFLOW_ANSWERS) {
      const fast = fastDocflowResponse(answer);
      const zod = docflowResponseSchema.safeParse(answer);
      if (fast !== undefined) {
        accepted++;
        expect(zod.success).toBe(true);
        expect(fast).toEqual(zod.data);
      }
    }
    // The gateway's own example answers, and the loose extras, take the plain way.
    expect(accepted).toBe(7);
  });

  it('leave every answer the schema refuses to the schema', () => {
    for (const answer of SUGGEST_ANSWERS)
      if (!suggestResponseSchema.safeParse(answer).success) expect(fastSuggestResponse(answer)).toBeUndefined();
    for (const answer of DOCFLOW_ANSWERS)
      if (!docflowResponseSchema.safeParse(answer).success) expect(fastDocflowResponse(answer)).toBeUndefined();
  });

  it("reads the docflow's type from type, else docflowType, else ''", () => {
    expect(fastDocflowResponse({ docflowId: 'd', docflowType: 'x', state: 's' })?.type).toBe('x');
    expect(fastDocflowResponse({ docflowId: 'd', type: 'y', docflowType: 'x', state: 's' })?.type).toBe('y');
    expect(fastDocflowResponse({ docflowId: 'd', state: 's' })?.type).toBe('');
  });
});

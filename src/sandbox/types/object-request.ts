/**
 * `object_request`: an extract on an object (docflow-types.md §2). No requirements: always
 * 200 `queued`. It completes with the extract files of its `type`, naming the object and its
 * mortgage records as they stand then, or ends in `error` for an object the registry does
 * not know.
 */
import { dateOf } from '../docflow-record.js';
import { CADASTRAL_SHAPE, Checker, checkEnvelope, type Problem } from '../docflow-validation.js';
import { EXTRACT_TYPES, extractFiles, type ExtractType } from '../reports.js';
import { textAt } from './read.js';
import type { DocflowTypeSpec } from './spec.js';

const ROOT = 'objectRequest.options';

function check(body: unknown): Problem[] {
  const c = new Checker();
  const options = checkEnvelope(c, body, 'objectRequest');
  if (options === undefined) return c.problems;
  c.oneOf(options, 'type', ROOT, EXTRACT_TYPES);
  c.text(options, 'cadastralNumber', ROOT, CADASTRAL_SHAPE);
  return c.problems;
}

export const objectRequest: DocflowTypeSpec = {
  type: 'object_request',
  check,
  contents: () => [],
  facts: (body) => ({ cadastralNumber: textAt(body, 'options', 'cadastralNumber'), extractType: textAt(body, 'options', 'type') }),
  objectOf: (body) => ({ cadastralNumber: textAt(body, 'options', 'cadastralNumber') }),
  // An extract is paid for, as a registration is.
  payable: true,
  refusals: [{ code: 'requestRefused', message: 'The register refused the extract: the request could not be processed' }],
  resultIds: 3,
  settle({ registry, at }, d) {
    const { cadastralNumber = '', extractType } = d.facts ?? {};
    if (!registry.knows(cadastralNumber)) {
      return { error: { code: 'objectNotFound', message: `The register holds no object with cadastral number ${cadastralNumber}` } };
    }
    const type = EXTRACT_TYPES.find((t) => t === extractType) ?? ('info' satisfies ExtractType);
    const context = { docflowId: d.docflowId, cadastralNumber, date: dateOf(at).slice(0, 10) };
    return { files: extractFiles(type, d.plan.resultIds ?? [], context, registry.recordsOf(cadastralNumber)) };
  },
};

/**
 * `action_request`: cancel, suspend or resume a docflow in processing (docflow-types.md §4).
 * Accepted only while that docflow is `sent` and the same account's; answered 200 `queued`,
 * and completes. The registry acts on the docflow at once: a cancelled one ends in `error`;
 * a suspended one stays `sent`, takes no step and says so in its view until resumed.
 */
import type { ApiErrorBody } from '../../domain/gateway.js';
import { Checker, checkEnvelope, isMissing, type Problem } from '../docflow-validation.js';
import { checkDocumentList, checkMember, namedContents } from './participants.js';
import { checkParent, findParent } from './parent.js';
import { at, itemsAt, textAt } from './read.js';
import type { DocflowTypeSpec } from './spec.js';

const ROOT = 'actionRequest.options';
const ACTION_TYPES = ['cancel', 'suspend', 'resume'] as const;
/** `document` in the documentation's table, `documents` in its type description: both are accepted. */
const DOCUMENT_KEYS = ['document', 'documents'] as const;

function check(body: unknown): Problem[] {
  const c = new Checker();
  const options = checkEnvelope(c, body, 'actionRequest');
  if (options === undefined) return c.problems;
  c.oneOf(options, 'actionType', ROOT, ACTION_TYPES);
  c.text(options, 'docflowId', ROOT);
  if (!isMissing(options.cause) && typeof options.cause !== 'string') c.format(`${ROOT}.cause`, `${ROOT}.cause must be a string`);
  c.list(options, 'docflowMember', ROOT)?.forEach((member, i) => checkMember(c, member, `${ROOT}.docflowMember[${i}]`));
  for (const key of DOCUMENT_KEYS) checkDocumentList(c, options, key, ROOT, false);
  return c.problems;
}

const cancelled = (actionDocflowId: string): ApiErrorBody => ({
  code: 'cancelled',
  message: "The registry stopped processing the docflow: it was cancelled at the applicant's request",
  context: { actionDocflowId },
});

export const actionRequest: DocflowTypeSpec = {
  type: 'action_request',
  check,
  contents: (body) =>
    DOCUMENT_KEYS.flatMap((key) =>
      itemsAt(body, 'options', key).flatMap((doc, i) => namedContents(at(doc, 'content'), `${ROOT}.${key}[${i}].content`)),
    ),
  facts: (body) => ({ parentDocflowId: textAt(body, 'options', 'docflowId'), actionType: textAt(body, 'options', 'actionType') }),
  payable: false,
  // Acted on at its creation: a random refusal afterwards would contradict what was done.
  refusals: [],
  resultIds: 0,
  admit(ctx, facts) {
    const target = `${ROOT}.docflowId`;
    const refused = checkParent(ctx, facts.parentDocflowId, target);
    if (refused !== undefined) return refused;
    const held = findParent(ctx, facts.parentDocflowId)?.hold !== undefined;
    if (facts.actionType === 'suspend' && held) return { code: 'state', message: 'The docflow is suspended already', target };
    if (facts.actionType === 'resume' && !held) return { code: 'state', message: 'The docflow is not suspended', target };
    return undefined;
  },
  created(ctx, docflow) {
    const parent = findParent(ctx, docflow.facts?.parentDocflowId);
    if (parent === undefined) return;
    const action = docflow.facts?.actionType;
    if (action === 'cancel') ctx.state.cancel(parent, ctx.now, cancelled(docflow.docflowId));
    else if (action === 'suspend') ctx.state.hold(parent, ctx.now, docflow.docflowId);
    else if (action === 'resume') ctx.state.release(parent, ctx.now);
  },
  settle: () => ({}),
};

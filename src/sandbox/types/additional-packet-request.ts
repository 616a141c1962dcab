/**
 * `additional_packet_request` (also `additional_package_request`, the documentation's list's
 * name): more documents for a docflow in processing (docflow-types.md §3). Accepted only
 * while that docflow is `sent` and the same account's; answered 200 `queued`, and completes.
 */
import { Checker, checkEnvelope, isRecord, type Problem } from '../docflow-validation.js';
import { checkDocumentList, checkMember, namedContents } from './participants.js';
import { checkParent } from './parent.js';
import { at, itemsAt, textAt } from './read.js';
import type { DocflowTypeSpec } from './spec.js';

const ROOT = 'additionalPacketRequest.options';

function check(body: unknown): Problem[] {
  const c = new Checker();
  const options = checkEnvelope(c, body, 'additionalPacketRequest');
  if (options === undefined) return c.problems;
  c.text(options, 'docflowId', ROOT);
  const packets = c.list(options, 'additionalDocuments', ROOT);
  packets?.forEach((packet: unknown, i) => {
    const path = `${ROOT}.additionalDocuments[${i}]`;
    if (!isRecord(packet)) return c.format(path, `${path} must be an object`);
    checkMember(c, packet.docflowMember, `${path}.docflowMember`);
    if (c.list(packet, 'documents', path) !== undefined) checkDocumentList(c, packet, 'documents', path, true);
  });
  return c.problems;
}

export const additionalPacketRequest: DocflowTypeSpec = {
  type: 'additional_packet_request',
  check,
  contents: (body) =>
    itemsAt(body, 'options', 'additionalDocuments').flatMap((packet, i) =>
      itemsAt(packet, 'documents').flatMap((doc, j) =>
        namedContents(at(doc, 'content'), `${ROOT}.additionalDocuments[${i}].documents[${j}].content`),
      ),
    ),
  facts: (body) => ({ parentDocflowId: textAt(body, 'options', 'docflowId') }),
  payable: false,
  refusals: [{ code: 'documentsInvalid', message: 'The register refused the additional documents' }],
  resultIds: 0,
  admit: (ctx, facts) => checkParent(ctx, facts.parentDocflowId, `${ROOT}.docflowId`),
  settle: () => ({}),
};

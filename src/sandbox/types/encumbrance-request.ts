/**
 * `encumbrance_request`: a mortgage's registration. Checked by docflow-validation.ts; a
 * completed one adds its mortgage record to the object (the number its extract shows).
 */
import { checkEncumbranceRequest, hasSignatures } from '../docflow-validation.js';
import { signersOf } from '../lifecycle.js';
import { ENCUMBRANCE_TYPES, type EncumbranceType } from '../registry.js';
import { at, textAt } from './read.js';
import type { DocflowTypeSpec } from './spec.js';

const AGREEMENT = 'options.appliedDocuments.mortgageAgreement.content';

/** The registration number the extract's page shows (files.ts): the object's, then the creation's number. */
export function recordNumberOf(cadastralNumber: string, seq: number): string {
  return `${cadastralNumber}-${String(seq).padStart(6, '0')}`;
}

export const encumbranceRequest: DocflowTypeSpec = {
  type: 'encumbrance_request',
  check: checkEncumbranceRequest,
  contents(body) {
    const content = at(body, 'options', 'appliedDocuments', 'mortgageAgreement', 'content');
    const signatures = at(content, 'signatures');
    return [
      [`${AGREEMENT}.info.contentPointer.id`, at(content, 'info', 'contentPointer', 'id')],
      ...(Array.isArray(signatures) ? signatures : []).map((s, i): [string, unknown] => [`${AGREEMENT}.signatures[${i}].id`, at(s, 'id')]),
    ];
  },
  facts: (body) => ({
    cadastralNumber: textAt(body, 'options', 'object', 'cadastralNumber'),
    encumbranceType: textAt(body, 'options', 'encumbranceType'),
    encumbrancerInn: textAt(body, 'options', 'whoUseRestriction', 'encumbrancer', 0, 'organization', 'inn'),
  }),
  objectOf(body) {
    const object = at(body, 'options', 'object');
    return { cadastralNumber: at(object, 'cadastralNumber'), address: at(object, 'address') };
  },
  signing: { signed: hasSignatures, signers: signersOf },
  payable: true,
  resultIds: 0,
  settle({ registry }, d) {
    const { cadastralNumber, encumbranceType, encumbrancerInn } = d.facts ?? {};
    if (cadastralNumber !== undefined && encumbrancerInn !== undefined) {
      const type = ENCUMBRANCE_TYPES.find((t) => t === encumbranceType) ?? ('mortgage' satisfies EncumbranceType);
      registry.add(cadastralNumber, {
        number: recordNumberOf(cadastralNumber, d.plan.seq),
        date: d.createdAt.slice(0, 10),
        type,
        encumbrancerInn,
      });
    }
    return { files: [{ file: d.plan.extract, signature: d.plan.extractSignature }] };
  },
};

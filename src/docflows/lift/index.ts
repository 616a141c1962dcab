/** `cessation_encumbrance_request`: lift a mortgage once its loan is repaid (docs/input-format.md, "Lifts"). */
import type { DocflowKind } from '../kind.js';
import { LIFT_COLUMNS, liftColumns } from './columns.js';
import type { LiftOwn } from './fields.js';
import { buildLiftRequest, LIFT_CODE } from './request.js';

export const lift: DocflowKind<LiftOwn> = {
  type: 'cessation_encumbrance_request',
  code: LIFT_CODE,
  name: 'lift',
  title: 'mortgage lifts',
  columns: LIFT_COLUMNS,
  own: liftColumns,
  documents: (deal) =>
    (deal.lift?.documents ?? []).map((document) => ({ document, fileField: 'otherDocumentFiles', signatureField: 'otherDocumentFiles' })),
  copy: (deal) => (deal.lift ? { ...deal, lift: { ...deal.lift, documents: deal.lift.documents.map((d) => ({ ...d })) } } : deal),
  attorney: true,
  refused: {
    en: 'lift (check recordNumber and recordDate)',
    ru: 'в погашении (проверьте recordNumber и recordDate)',
    flags: '--type lift --resubmit',
  },
  buildRequest: buildLiftRequest,
};

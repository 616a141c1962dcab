/** `cessation_encumbrance_request`: lift a mortgage once its loan is repaid (docs/input-format.md, "Lifts"). */
import type { DocflowKind } from '../kind.js';
import { LIFT_COLUMNS, liftColumns } from './columns.js';
import { buildLiftRequest } from './request.js';

export const lift: DocflowKind = {
  type: 'cessation_encumbrance_request',
  name: 'lift',
  title: 'mortgage lifts',
  columns: LIFT_COLUMNS,
  own: liftColumns,
  attorney: true,
  refused: {
    en: 'lift (check recordNumber and recordDate)',
    ru: 'в погашении (проверьте recordNumber и recordDate)',
    flags: '--type lift --resubmit',
  },
  buildRequest: buildLiftRequest,
};

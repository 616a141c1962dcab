/** `encumbrance_request`: register a mortgage (the product's first type, and the default). */
import { AGREEMENT_FIELDS } from '../../input/fields.js';
import { AGREEMENT_COLUMNS } from '../../input/validate-deal.js';
import type { DocflowKind } from '../kind.js';
import { buildEncumbranceRequest } from './request.js';

export const registration: DocflowKind = {
  type: 'encumbrance_request',
  name: 'registration',
  title: 'mortgage registrations',
  columns: AGREEMENT_FIELDS,
  own: AGREEMENT_COLUMNS,
  refused: { en: 'registration', ru: 'в регистрации', flags: '--resubmit' },
  buildRequest: buildEncumbranceRequest,
};

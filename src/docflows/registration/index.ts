/**
 * `encumbrance_request`: register a mortgage (the product's first type, and the default). Its own
 * field, the agreement, is read from canonical columns (src/input/validate-deal.ts), since the
 * validator reads it when no type is named and a registration's readings stay what they were.
 */
import { AGREEMENT_FIELDS } from '../../input/fields.js';
import { AGREEMENT_COLUMNS, agreementDocuments } from '../../input/validate-deal.js';
import type { DocflowKind } from '../kind.js';
import { buildEncumbranceRequest, REGISTRATION_CODE } from './request.js';

export const registration: DocflowKind = {
  type: 'encumbrance_request',
  code: REGISTRATION_CODE,
  name: 'registration',
  title: 'mortgage registrations',
  columns: AGREEMENT_FIELDS,
  own: AGREEMENT_COLUMNS,
  documents: agreementDocuments,
  copy: (deal) => (deal.agreement ? { ...deal, agreement: { ...deal.agreement } } : deal),
  refused: { en: 'registration', ru: 'в регистрации', flags: '--resubmit' },
  buildRequest: buildEncumbranceRequest,
};

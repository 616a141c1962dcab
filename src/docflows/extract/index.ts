/**
 * `object_request`: order an extract on an object, followed to `completed`; `documents <batch>`
 * downloads it. A bank orders one again on purpose (before and after a registration), so its
 * ledger key is the dealId with the extract's type and its order (the day, or the batch when
 * ordered `--again`): the same extract of a deal is ordered once a day, never twice by accident.
 */
import type { Deal } from '../../domain/deal.js';
import type { BankProfile } from '../../input/profile.js';
import { requestIdOf } from '../../realty/request-id.js';
import type { DocflowRequest } from '../../domain/gateway.js';
import type { DocflowKind } from '../kind.js';
import { EXTRACT_COLUMNS, extractColumns } from './columns.js';

/** `object_request`'s options (docs/gateway.md). */
export interface ObjectRequestOptions {
  type: 'info' | 'base' | 'ownership';
  cadastralNumber: string;
}

export function buildExtractRequest(
  deal: Deal,
  cadastralNumber: string,
  profile: BankProfile,
  _baseUrl: string,
  requestId: string = requestIdOf(profile.organization.inn, extractKey(deal), 0, 'object_request'),
): DocflowRequest<ObjectRequestOptions> {
  if (!deal.extract) throw new Error('an extract needs its extractType');
  return { requestId, options: { type: deal.extract.extractType, cadastralNumber } };
}

/** `<dealId>|<extractType>|<order>`: the deal's entry in the ledger for this extract. */
function extractKey(deal: Deal): string {
  if (!deal.extract) throw new Error('an extract needs its extractType');
  return `${deal.dealId}|${deal.extract.extractType}|${deal.extract.order}`;
}

export const extract: DocflowKind = {
  type: 'object_request',
  name: 'extract',
  title: 'extracts',
  columns: EXTRACT_COLUMNS,
  own: extractColumns,
  refused: { en: 'extract (check the object)', ru: 'в выписке (проверьте объект)', flags: '--type extract --again' },
  buildRequest: buildExtractRequest,
  ledgerKey: extractKey,
};

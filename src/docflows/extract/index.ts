/**
 * `object_request`: order an extract on an object, followed to `completed`; `documents <batch>`
 * downloads it. A bank orders one again on purpose (before and after a registration), so its
 * ledger key is the dealId with the extract's type and its order (the day, or the batch when
 * ordered `--again`): the same extract of a deal is ordered once a day, never twice by accident.
 */
import type { BankProfile } from '../../input/profile.js';
import { formatRequestId } from '../../realty/request-id.js';
import type { DocflowRequest } from '../../domain/gateway.js';
import type { DocflowKind } from '../kind.js';
import { EXTRACT_COLUMNS, extractColumns } from './columns.js';
import type { ExtractDeal, ExtractOwn } from './fields.js';

/** Its code in our requestIds: `<inn>:ext:<try>:<dealId>|<extractType>|<order>`. */
const EXTRACT_CODE = 'ext';

/** `object_request`'s options (docs/gateway.md). */
export interface ObjectRequestOptions {
  type: 'info' | 'base' | 'ownership';
  cadastralNumber: string;
}

export function buildExtractRequest(
  deal: ExtractDeal,
  cadastralNumber: string,
  profile: BankProfile,
  _baseUrl: string,
  requestId: string = formatRequestId(profile.organization.inn, EXTRACT_CODE, 0, extractKey(deal)),
): DocflowRequest<ObjectRequestOptions> {
  if (!deal.extract) throw new Error('an extract needs its extractType');
  return { requestId, options: { type: deal.extract.extractType, cadastralNumber } };
}

/** `<dealId>|<extractType>|<order>`: the deal's entry in the ledger for this extract. */
function extractKey(deal: ExtractDeal): string {
  if (!deal.extract) throw new Error('an extract needs its extractType');
  return `${deal.dealId}|${deal.extract.extractType}|${deal.extract.order}`;
}

export const extract: DocflowKind<ExtractOwn> = {
  type: 'object_request',
  code: EXTRACT_CODE,
  name: 'extract',
  title: 'extracts',
  columns: EXTRACT_COLUMNS,
  own: extractColumns,
  refused: { en: 'extract (check the object)', ru: 'в выписке (проверьте объект)', flags: '--type extract --again' },
  buildRequest: buildExtractRequest,
  ledgerKey: extractKey,
};

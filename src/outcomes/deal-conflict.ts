/**
 * A row whose dealId the ledger has for another property: the deal registered under it is
 * another deal, so the row is neither `already_submitted` nor sent (`--resubmit` included:
 * a resubmission would put another property's docflow in place of the one registered). It
 * ends `invalid` with DEAL_ID_CONFLICT, naming both properties by cadastral number or
 * address (never a person) and the docflow made before, and stays in the attention file.
 */
import { describeProperty, type PropertyKey } from '../input/property-key.js';
import { ERROR_CODES } from './error-codes.js';
import type { OutcomeRecord, SubmittedDeal } from '../domain/outcome.js';

export function dealIdConflict(
  row: number,
  dealId: string,
  deal: SubmittedDeal,
  registered: PropertyKey,
  property: PropertyKey,
  attempts: number,
): OutcomeRecord {
  const record: OutcomeRecord = {
    row,
    dealId,
    outcome: 'invalid',
    attempts,
    errorCode: ERROR_CODES.DEAL_ID_CONFLICT.code,
    errorMessage:
      `dealId ${dealId} was registered for ${describeProperty(registered)} (batch ${deal.batch}, row ${deal.row}, docflow ${deal.docflowId}); ` +
      `this row is for ${describeProperty(property)}: give this deal its own dealId`,
    finishedAt: new Date().toISOString(),
  };
  if (property.cadastralNumber) record.cadastralNumber = property.cadastralNumber;
  return record;
}

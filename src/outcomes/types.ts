/** The outcomes of product.md: exactly one per input row. */

export const OUTCOMES = [
  'queued',
  'suspended',
  'already_submitted',
  'invalid',
  'not_found',
  'ambiguous',
  'rejected',
  'forbidden',
  'unavailable',
  'failed',
  'pending',
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Outcomes that mean the deal is at the registry: exit 0 when every row has one. */
export const SUBMITTED_OUTCOMES: ReadonlySet<Outcome> = new Set(['queued', 'suspended', 'already_submitted']);

/** One line of the results file; field order is the file's column order. */
export interface OutcomeRecord {
  row: number;
  dealId: string;
  outcome: Outcome;
  docflowId?: string;
  cadastralNumber?: string;
  httpStatus?: number;
  attempts: number;
  errorCode?: string;
  errorMessage?: string;
  finishedAt: string;
  /** ambiguous: the equal objects' cadastral numbers; not_found: the nearest ones. Not a results column. */
  candidates?: string[];
}

/** Outcomes that need a person: the rows of the attention file. */
export const ATTENTION_OUTCOMES: ReadonlySet<Outcome> = new Set(['invalid', 'not_found', 'ambiguous', 'rejected', 'forbidden', 'unavailable', 'failed']);

export const RESULT_COLUMNS = [
  'row',
  'dealId',
  'outcome',
  'docflowId',
  'cadastralNumber',
  'httpStatus',
  'attempts',
  'errorCode',
  'errorMessage',
  'finishedAt',
] as const satisfies ReadonlyArray<keyof OutcomeRecord>;

/** Where a deal went at the registry, kept across batches so it is never sent twice. */
export interface LedgerEntry {
  dealId: string;
  docflowId: string;
  outcome: 'queued' | 'suspended';
  batch: string;
  row: number;
  at: string;
}

/**
 * The ledger entry that makes a row `already_submitted`: one of the deal's at another
 * row or batch. A row's own entry (its batch loaded again after it expired) is not: the
 * row is sent again with the same requestId, and the gateway answers with its docflow.
 */
export function submittedElsewhere(entry: LedgerEntry | undefined, batch: string, row: number): entry is LedgerEntry {
  return entry !== undefined && !(entry.batch === batch && entry.row === row);
}

/** A row whose deal reached the registry before: nothing is sent, the earlier docflowId stands. */
export function alreadySubmitted(row: number, dealId: string, entry: LedgerEntry, attempts: number): OutcomeRecord {
  return {
    row,
    dealId,
    outcome: 'already_submitted',
    docflowId: entry.docflowId,
    attempts,
    errorMessage: `submitted before (batch ${entry.batch}, row ${entry.row}, ${entry.outcome}, ${entry.at}); --resubmit sends it again`,
    finishedAt: new Date().toISOString(),
  };
}

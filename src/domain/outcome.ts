/**
 * The outcomes (docs/results.md, "Outcomes"): exactly one per input row. Vocabulary only (no I/O):
 * the ledger, the stores and the files all speak it.
 */

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

/** A count of 0 for every outcome. */
export function emptyCounts(): Record<Outcome, number> {
  return Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
}

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
  /** Where the row's docflow stands at the registry (read from the news feed, never stored with the outcome). */
  state?: string;
  stateAt?: string;
  requirement?: Requirement;
  paymentUin?: string;
  paymentAmount?: string;
  registryError?: string;
  /** The requestId of the try that made the row's docflow (or found it: another row's), and the docflow's type. */
  requestId?: string;
  type?: string;
  /** DUPLICATE_DOCFLOW: the deal's other docflow at the gateway (src/db/duplicates.ts). */
  otherDocflowId?: string;
}

/**
 * A docflow's life at the registry (docs/gateway.md, "After creation"): queued → sent →
 * completed or error; suspended while a requirement (a signature, a payment) stands.
 */
export const DOCFLOW_STATES = ['queued', 'sent', 'suspended', 'completed', 'error'] as const;
export type DocflowState = (typeof DOCFLOW_STATES)[number];
/** States after which the registry does nothing more with the docflow. */
export const FINAL_STATES: ReadonlySet<string> = new Set<DocflowState>(['completed', 'error']);
/** What a suspended docflow waits for. */
export type Requirement = 'signature' | 'payment';

/** Where a docflow stands, as the news feed last showed it. */
export interface DocflowStatus {
  state: string;
  /** When the feed's item said so (ISO 8601). */
  stateAt: string;
  requirement?: Requirement;
  /** Payment requirement: the payment's identifier(s) and amount(s), space-separated when several. */
  paymentUin?: string;
  paymentAmount?: string;
  /** Who is to pay, masked (initials only for a person). */
  payer?: string;
  /** Since when the current requirement stands (ISO 8601). */
  requirementAt?: string;
  /** `code: message` of a registry error, personal data masked. */
  registryError?: string;
  /** Result files of a completed docflow. */
  resultFiles?: number;
}

/** Outcomes that need a person: the rows of the attention file. */
export const ATTENTION_OUTCOMES: ReadonlySet<Outcome> = new Set([
  'invalid',
  'not_found',
  'ambiguous',
  'rejected',
  'forbidden',
  'unavailable',
  'failed',
]);

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

/** Appended to the results file after RESULT_COLUMNS (which stay first, unchanged): the docflow's state at the registry. */
export const STATE_COLUMNS = [
  'state',
  'stateAt',
  'requirement',
  'paymentUin',
  'paymentAmount',
  'registryError',
] as const satisfies ReadonlyArray<keyof OutcomeRecord>;

/**
 * Appended after STATE_COLUMNS: the requestId of the try that made the row's docflow (another
 * row's for already_submitted) and its type, what `realty-batch ledger import` rebuilds a lost
 * ledger from.
 */
export const ORIGIN_COLUMNS = ['requestId', 'type'] as const satisfies ReadonlyArray<keyof OutcomeRecord>;

/** Appended after ORIGIN_COLUMNS: a row whose deal has two docflows at the gateway (DUPLICATE_DOCFLOW) names the other. */
export const DUPLICATE_COLUMNS = ['otherDocflowId'] as const satisfies ReadonlyArray<keyof OutcomeRecord>;

/** Every column of the results file, in order. */
export const RESULTS_FILE_COLUMNS = [...RESULT_COLUMNS, ...STATE_COLUMNS, ...ORIGIN_COLUMNS, ...DUPLICATE_COLUMNS] as const;

/**
 * The row is done with at the registry: refused before sending (invalid, not_found,
 * ambiguous, rejected, forbidden, unavailable, failed: no automatic try is left), or its
 * docflow reached a final state (completed, error). `pending` and docflows on their way are not.
 */
export function isRowFinal(record: Pick<OutcomeRecord, 'outcome' | 'state'>): boolean {
  if (record.outcome === 'pending') return false;
  if (!SUBMITTED_OUTCOMES.has(record.outcome)) return true;
  return record.state !== undefined && FINAL_STATES.has(record.state);
}

/** How a deal's docflow became known: the gateway's answer, the news feed after an answer was lost, or an operator. */
export type Via = 'answer' | 'feed' | 'operator';

/** A deal's docflow as the ledger keeps it, as a row that did not make it sees it. */
export interface SubmittedDeal {
  docflowId: string;
  outcome: 'queued' | 'suspended';
  /** The row that made it. */
  batch: string;
  row: number;
  /** When the docflow was known (ISO 8601). */
  at: string;
  /** The requestId of the try that made it, and its docflow type (src/ledger/entry.ts), when the ledger's entry names them. */
  requestId?: string;
  type?: string;
}

/** The results file's columns of a row's docflow origin: a ledger entry can be rebuilt from them (`realty-batch ledger import`). */
function originOf(deal: Pick<SubmittedDeal, 'requestId' | 'type'>): Pick<OutcomeRecord, 'requestId' | 'type'> {
  return { ...(deal.requestId && { requestId: deal.requestId }), ...(deal.type && { type: deal.type }) };
}

/** A row whose deal reached the registry from another row or batch: nothing is sent, the earlier docflowId stands. */
/**
 * A row whose deal another row or batch made. `stands`: it asked to resubmit, and the docflow's
 * state (as the feed last showed it; '' for none yet) is not the registry's refusal.
 */
export function alreadySubmitted(row: number, dealId: string, deal: SubmittedDeal, attempts: number, stands?: string): OutcomeRecord {
  const before = `submitted before (batch ${deal.batch}, row ${deal.row}, ${deal.outcome}, ${deal.at})`;
  return {
    row,
    dealId,
    outcome: 'already_submitted',
    docflowId: deal.docflowId,
    attempts,
    errorMessage:
      stands === undefined
        ? `${before}; --resubmit sends it again once the registry refused it (state error)`
        : `${before}; not sent again: --resubmit sends a deal again only once the registry refused its docflow (state error), and this one is ${stands || 'not in the news feed yet'}`,
    finishedAt: new Date().toISOString(),
    ...originOf(deal),
  };
}

/** A row that made its deal's docflow before: its outcome again, as the ledger keeps it. */
export function ownDocflow(
  row: number,
  dealId: string,
  deal: Pick<SubmittedDeal, 'docflowId' | 'outcome' | 'at' | 'requestId' | 'type'>,
  via: Via,
  attempts: number,
): OutcomeRecord {
  // The contract answers a queued docflow 200 and a suspended one 201 (docs/gateway.md): the status
  // the lost answer had, whichever way the docflow became known.
  const record: OutcomeRecord = {
    row,
    dealId,
    outcome: deal.outcome,
    docflowId: deal.docflowId,
    httpStatus: deal.outcome === 'queued' ? 200 : 201,
    attempts,
    finishedAt: new Date().toISOString(),
    ...originOf(deal),
  };
  if (via === 'feed') record.errorMessage = `the gateway's answer was lost; its docflow was found in the news feed (${deal.at})`;
  if (via === 'operator') record.errorMessage = `its docflow was named by an operator (${deal.at}) after the gateway was checked`;
  return record;
}

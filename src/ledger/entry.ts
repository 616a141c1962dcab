/**
 * The ledger: for every deal a bank ever sent, what the gateway holds of it. It is
 * the truth "never twice" rests on, for every row of every batch: a deal is claimed
 * in it before its docflow is asked for, its tries are written ahead of them, and
 * the docflow it reached stays in it for REALTY_LEDGER_DAYS, long after batches. It lives in
 * the database (src/db/, table `ledger`), never in Redis: a Redis emptied or restored forgets
 * only work, never what was filed.
 */

import type { PropertyKey } from '../input/property-key.js';
import { DOCFLOW_TYPE_CODES, parseRequestId, REGISTRATION, requestIdOf } from '../docflows/registry.js';
import type { DocflowType } from '../domain/gateway.js';
import type { SubmittedDeal, Via } from '../domain/outcome.js';

export type { PropertyKey, SubmittedDeal, Via };

/** Where a claim stands: held between tries, a try whose answer is not known yet, or done. */
export type LedgerState = 'idle' | 'sending' | 'submitted';

export interface LedgerEntry {
  dealId: string;
  /** The bank: its profile's encumbrancer INN. */
  bank: string;
  type: DocflowType;
  /** The resubmission number of the current (or last) try; 0 until someone passes --resubmit. */
  n: number;
  /** The requestId of try `n`: a function of the bank, the type, the dealId and `n`, nothing else. */
  requestId: string;
  state: LedgerState;
  /** The row that holds the claim, or made the docflow. */
  batch: string;
  row: number;
  docflowId?: string;
  outcome?: 'queued' | 'suspended';
  /** When the docflow was known (ISO 8601). */
  at?: string;
  /** How it was known: the gateway's answer, the news feed after an answer was lost, or an operator. */
  via?: Via;
  /** A try whose answer is not known: when it began and ended (ms of the database's clock). */
  tryAt?: number;
  endAt?: number;
  /**
   * The property the deal was claimed for (columns `cn`, and `addr`: its address's digest,
   * storedProperty in src/input/property-key.ts): a dealId that comes back for another property
   * is a conflict, never the same deal. Absent in an entry the feed made with no row (or the
   * import of a results file without it): such an entry is taken for whatever property the row
   * names; nothing is called a conflict on missing data.
   */
  property?: PropertyKey;
}

/** The property of an entry's columns `cn` and `addr`; undefined when it has neither (see LedgerEntry.property). */
export function propertyOf(cn: string | null | undefined, addr: string | null | undefined): PropertyKey | undefined {
  if (!cn && !addr) return undefined;
  return { ...(cn && { cadastralNumber: cn }), ...(addr && { address: addr }) };
}

export { DOCFLOW_TYPE_CODES, parseRequestId, REGISTRATION, requestIdOf, type DocflowType };

/** A submitted deal as the load reads it: its docflow, how it became known, the property it is for (when kept). */
export type RegisteredDeal = SubmittedDeal & { via: Via; property?: PropertyKey };

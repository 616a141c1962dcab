/**
 * The ledger: for every deal a bank ever sent, what the gateway holds of it. It is
 * the truth "never twice" rests on, for every row of every batch: a deal is claimed
 * in it before its docflow is asked for, its tries are written ahead of them, and
 * the docflow it reached stays in it for REALTY_LEDGER_DAYS (400), long after batches.
 */

import type { PropertyKey } from '../input/property-key.js';
import type { SubmittedDeal, Via } from '../outcomes/types.js';

export type { PropertyKey, SubmittedDeal, Via };

/** Where a claim stands: held between tries, a try whose answer is not known yet, or done. */
export type LedgerState = 'idle' | 'sending' | 'submitted';

export interface LedgerEntry {
  dealId: string;
  /** The bank: its profile's encumbrancer INN. */
  bank: string;
  /** The resubmission number of the current (or last) try; 0 until someone passes --resubmit. */
  n: number;
  /** The requestId of try `n`: a function of the bank, the dealId and `n`, nothing else. */
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
  /** A try whose answer is not known: when it began and ended (ms of Redis' clock). */
  tryAt?: number;
  endAt?: number;
  /**
   * The property the deal was claimed for (hash fields `cn`, and `addr`: its address's digest,
   * storedProperty in src/input/property-key.ts): a dealId that comes back
   * for another property is a conflict, never the same deal. Absent in an entry written before
   * entries kept it (and in one the feed made with no row): such an entry is taken as before,
   * for whatever property the row names; nothing is called a conflict on missing data.
   */
  property?: PropertyKey;
}

/** The property of an entry's hash fields `cn` and `addr`; undefined when it has neither (see LedgerEntry.property). */
export function propertyOf(cn: string | null | undefined, addr: string | null | undefined): PropertyKey | undefined {
  if (!cn && !addr) return undefined;
  return { ...(cn && { cadastralNumber: cn }), ...(addr && { address: addr }) };
}

/**
 * `<bank INN>:<n>:<dealId>`: the same deal always sends the same requestId for one
 * resubmission number, whoever loads it, in whichever batch, on whichever host. The
 * INN and `n` are digits, so the dealId after the second colon may hold anything.
 */
export function requestIdOf(bank: string, dealId: string, n = 0): string {
  return `${bank}:${n}:${dealId}`;
}

/** The bank and dealId a requestId of ours names; undefined for anyone else's. */
export function parseRequestId(requestId: string): { bank: string; n: number; dealId: string } | undefined {
  const match = /^(\d+):(\d+):(.+)$/s.exec(requestId);
  return match ? { bank: match[1]!, n: Number(match[2]), dealId: match[3]! } : undefined;
}

/** The entry of `bank`'s deal `dealId` from its hash (HGETALL); undefined when the deal has none. */
export function parseLedgerEntry(hash: Record<string, string>, bank: string, dealId: string): LedgerEntry | undefined {
  if (!hash.state) return undefined;
  const n = Number(hash.n ?? 0);
  const entry: LedgerEntry = {
    dealId,
    bank,
    n,
    // Entries of earlier versions wrote it out; it is always this (src/ledger/lua.ts, rid_of).
    requestId: hash.rid ?? requestIdOf(bank, dealId, n),
    state: hash.state as LedgerState,
    batch: hash.batch ?? '',
    row: Number(hash.row ?? 0),
  };
  if (hash.docflowId) entry.docflowId = hash.docflowId;
  if (hash.outcome) entry.outcome = hash.outcome as 'queued' | 'suspended';
  if (hash.at) entry.at = hash.at;
  // (A docflow known from the gateway's answer keeps no `via`: src/ledger/lua.ts, submit.)
  if (hash.via) entry.via = hash.via as Via;
  else if (entry.state === 'submitted') entry.via = 'answer';
  if (hash.tryAt) entry.tryAt = Number(hash.tryAt);
  if (hash.endAt) entry.endAt = Number(hash.endAt);
  const property = propertyOf(hash.cn, hash.addr);
  if (property) entry.property = property;
  return entry;
}

/** The fields `submittedDeal` and the load's check read, in this order. */
export const SUBMITTED_FIELDS = ['state', 'docflowId', 'outcome', 'batch', 'row', 'at', 'via', 'cn', 'addr'] as const;

/** A submitted deal as the load reads it: its docflow, how it became known, the property it is for (when kept). */
export type RegisteredDeal = SubmittedDeal & { via: Via; property?: PropertyKey };

/** The docflow of a submitted entry, from SUBMITTED_FIELDS' values; undefined unless submitted. */
export function submittedDeal(values: ReadonlyArray<string | null>): RegisteredDeal | undefined {
  const [state, docflowId, outcome, batch, row, at, via, cn, addr] = values;
  if (state !== 'submitted' || !docflowId) return undefined;
  const property = propertyOf(cn, addr);
  return {
    docflowId,
    outcome: outcome === 'suspended' ? 'suspended' : 'queued',
    batch: batch ?? '',
    row: Number(row ?? 0),
    at: at ?? '',
    via: via === 'feed' || via === 'operator' ? via : 'answer',
    ...(property && { property }),
  };
}

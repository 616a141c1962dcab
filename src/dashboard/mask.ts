/**
 * What Bull Board may show of a job. A waiting or failed job can still hold its
 * deal, with the owners' names, SNILS, passports, birth data and addresses: the
 * page shows the property and the keys only. Lists of allowed keys, not of
 * forbidden ones, so a field added to the deal later stays hidden until someone
 * decides it may be shown.
 */
import type { AppliedDocument, Deal } from '../domain/deal.js';
import { RESULT_COLUMNS, type OutcomeRecord } from '../domain/outcome.js';
import { DEAL_FIELDS } from '../input/fields.js';
import type { DealJobData } from '../queue/job-data.js';
import { unpackDealCompact } from '../queue/deal-pack.js';

export const MASK = '***';

/** The job's own keys: no personal data in any of them. */
const JOB_KEYS: ReadonlySet<string> = new Set(['batch', 'row', 'dealId', 'resubmit', 'holds', 'waits'] satisfies Array<keyof DealJobData>);

/** The deal's property: where and what it is, never who owns it (docs/input-format.md, "Deal and property"). */
const DEAL_KEYS = DEAL_FIELDS satisfies ReadonlyArray<keyof Deal>;

const AGREEMENT_KEYS = ['contentId', 'signatureIds', 'fileType'] as const satisfies ReadonlyArray<keyof AppliedDocument>;

const OUTCOME_KEYS: ReadonlySet<string> = new Set([...RESULT_COLUMNS, 'candidates'] satisfies Array<keyof OutcomeRecord>);

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Anything that is not a plain scalar is shown as the mask: a string could hold anything. */
function opaque(value: unknown): unknown {
  return value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean' ? value : MASK;
}

function pick(source: Json, keys: readonly string[]): Json {
  const out: Json = {};
  for (const key of keys) if (key in source) out[key] = source[key];
  return out;
}

/** A deal as the page shows it: the property, each owner as the mask, the agreement's document ids. */
export function maskDeal(deal: unknown): unknown {
  if (!isRecord(deal)) return opaque(deal);
  const out = pick(deal, DEAL_KEYS);
  if (Array.isArray(deal.owners)) out.owners = deal.owners.map(() => MASK);
  else if ('owners' in deal) out.owners = MASK;
  if (isRecord(deal.agreement)) out.agreement = pick(deal.agreement, AGREEMENT_KEYS);
  return out;
}

/** Bull Board's `data` formatter: a deal job's data without personal data. */
export function maskJobData(data: unknown): unknown {
  if (!isRecord(data)) return opaque(data);
  const out: Json = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === 'deal') out.deal = maskDeal(value);
    // The deal as jobs keep it (packed, src/queue/deal-pack.ts): shown as the deal, masked the same
    // way. A job written so keeps its dealId in its id only (the page shows the id).
    else if (key === 'c' && Array.isArray(value)) {
      const { dealId: _dealId, ...deal } = unpackDealCompact(value, '');
      out.deal = maskDeal(typeof data.dealId === 'string' ? { dealId: data.dealId, ...deal } : deal);
    } else out[key] = JOB_KEYS.has(key) ? value : MASK;
  }
  return out;
}

/** Bull Board's `returnValue` formatter: an outcome record (the worker already masked its message). */
export function maskReturnValue(value: unknown): unknown {
  if (!isRecord(value)) return opaque(value);
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, OUTCOME_KEYS.has(key) ? v : MASK]));
}

/**
 * What the chaos suite asserts once its fleet is quiet, from the results files (what the bank
 * reads) and the sandbox's own record of every docflow it made (what the registry got).
 */
import { expect } from 'vitest';
import { parseRequestId } from '../../src/ledger/entry.js';
import type { SandboxDocflow } from '../../src/sandbox/index.js';
import { rowKey, type KeptOutcome } from './record-probe.js';

export type ResultLine = Record<string, string>;
/** What a load prints with `--json` (the fields checked here). */
export interface LoadSummary {
  read: number;
  invalid: number;
  alreadySubmitted: number;
}

export const SUBMITTED: ReadonlySet<string> = new Set(['queued', 'suspended']);
const DEAL_ID = 0;

/**
 * The try-0 requestId of this row's docflow (`<inn>:<type code>:0:<ledger key>`): of its deal,
 * and of its type when the row names one; an extract's ledger key is `<dealId>|<extractType>|<order>`.
 */
const isFirstTryOf = (requestId: string | undefined, line: ResultLine | undefined): boolean => {
  const parsed = requestId === undefined ? undefined : parseRequestId(requestId);
  const dealId = line?.dealId;
  if (!parsed || dealId === undefined || parsed.n !== 0) return false;
  if (line!.type && parsed.type !== line!.type) return false;
  return parsed.dealId === dealId || parsed.dealId.startsWith(`${dealId}|`);
};

/**
 * Every row exactly one outcome: one line per row, in input order, for the deal of its row,
 * none pending; rows refused beyond what the load refused are only the claim's DEAL_ID_CONFLICT.
 */
export function expectOneOutcomePerRow(name: string, rows: readonly string[][], lines: readonly ResultLine[], loaded: LoadSummary): void {
  expect(
    lines.map((l) => Number(l.row)),
    name,
  ).toEqual(rows.map((_, i) => i + 1));
  expect(
    lines.filter((l, i) => l.dealId !== rows[i]![DEAL_ID] && l.outcome !== 'invalid'),
    name,
  ).toEqual([]);
  expect(
    lines.filter((l) => !l.outcome || l.outcome === 'pending'),
    name,
  ).toEqual([]);
  // A dealId another batch registers meanwhile for another property (left's row 800 repeats row 1's
  // dealId for another property, and right shares that row) is refused at the claim, after the load.
  const invalid = lines.filter((l) => l.outcome === 'invalid');
  const atClaim = invalid.filter((l) => l.errorCode === 'DEAL_ID_CONFLICT' && / was registered for /.test(l.errorMessage ?? ''));
  expect(invalid.length - loaded.invalid, name).toBeGreaterThanOrEqual(0);
  expect(invalid.length - loaded.invalid, name).toBeLessThanOrEqual(atClaim.length);
}

/** Per requestId and per deal and type: at most one docflow, whatever happened (a deal's registration and its lift are two). */
export function expectOneDocflowPerDeal(docflows: readonly SandboxDocflow[], severalPerRequestId: number): void {
  const group = (key: (d: SandboxDocflow) => string) => {
    const by = new Map<string, string[]>();
    for (const d of docflows) by.set(key(d), [...(by.get(key(d)) ?? []), d.docflowId]);
    return [...by].filter(([, list]) => list.length > 1).map(([k, list]) => ({ [k]: list }));
  };
  expect(group((d) => d.requestId ?? '(none)')).toEqual([]);
  expect(
    group((d) => {
      const parsed = parseRequestId(d.requestId ?? '');
      return parsed ? `${parsed.type} ${parsed.dealId}` : `(unreadable) ${d.requestId}`;
    }),
  ).toEqual([]);
  expect(severalPerRequestId).toBe(0);
}

/**
 * Every docflow belongs to a row that reports it (queued or suspended, as it was created), and
 * every row that names a docflow names one that exists, of its deal.
 */
export function expectDocflowsReported(docflows: readonly SandboxDocflow[], lines: Record<string, readonly ResultLine[]>): void {
  const reporting = new Map<string, ResultLine>();
  for (const batch of Object.values(lines)) for (const l of batch) if (SUBMITTED.has(l.outcome!)) reporting.set(l.docflowId!, l);
  const orphans = docflows.filter((d) => {
    const line = reporting.get(d.docflowId);
    // The row reports the state the docflow was created in (its life has gone on since).
    const created = d.status === 200 ? 'queued' : 'suspended';
    return !line || line.outcome !== created || !isFirstTryOf(d.requestId, line);
  });
  expect(orphans).toEqual([]);
  const known = new Map(docflows.map((d) => [d.docflowId, d]));
  for (const [name, batch] of Object.entries(lines)) {
    const wrong = batch.filter(
      (l) => (SUBMITTED.has(l.outcome!) || l.outcome === 'already_submitted') && !isFirstTryOf(known.get(l.docflowId!)?.requestId, l),
    );
    expect(wrong, name).toEqual([]);
  }
}

/** Each shared valid deal: one batch's row made the docflow, the other's says already_submitted with it. */
export function expectSharedDealsOnce(shared: ReadonlySet<string>, left: readonly ResultLine[], right: readonly ResultLine[]): void {
  for (const dealId of shared) {
    const pair = [left, right].map((lines) => lines.find((l) => l.dealId === dealId)!);
    if (pair.some((l) => l.outcome === 'invalid')) continue;
    expect(pair.map((l) => (l.outcome === 'already_submitted' ? 'already' : 'made')).sort(), dealId).toEqual(['already', 'made']);
    expect(pair[0]!.docflowId, dealId).toBe(pair[1]!.docflowId);
  }
}

/** A row that had its outcome in the database before Redis was emptied ends with that outcome and docflow. */
export function expectOutcomesKept(kept: ReadonlyMap<string, KeptOutcome>, lines: Record<string, readonly ResultLine[]>): void {
  const changed: Array<{ row: string; before: KeptOutcome; after: KeptOutcome | undefined }> = [];
  for (const [name, batch] of Object.entries(lines)) {
    for (const l of batch) {
      const before = kept.get(rowKey(name, Number(l.row)));
      const after = { outcome: l.outcome ?? '', docflowId: l.docflowId ?? '' };
      if (before && (before.outcome !== after.outcome || before.docflowId !== after.docflowId))
        changed.push({ row: rowKey(name, Number(l.row)), before, after });
    }
  }
  expect(changed).toEqual([]);
}

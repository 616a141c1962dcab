/**
 * `realty-batch cancel|suspend|resume <batch>`: an `action_request` for each chosen docflow of the
 * batch, on behalf of its row's owners (read from the input again) and the bank, at most once per
 * docflow and action (followup-ledger.ts). An action goes only to a docflow in processing
 * (`sent`). `--duplicates` chooses the second docflows the news feed found for the batch's deals
 * (src/db/duplicates.ts): one `sent` is cancelled; one still `suspended` waits for signatures and
 * is never signed (`to-sign` and `sign` leave it alone); one `completed` is registered and needs a
 * lift; any other is said.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { BatchMeta } from '../batch/batch-store.js';
import { duplicatesOfBatch } from '../db/duplicates.js';
import { recordAction } from '../db/operator-actions.js';
import { SessionRefusedError, UsageError } from '../errors.js';
import { maskRegistryText } from '../feed/item-status.js';
import type { BankProfile } from '../input/profile.js';
import type { Logger } from '../logger.js';
import { withGatewayRetry, type GatewayRetryOptions } from '../realty/gateway-retry.js';
import { eachLimit } from '../results/docflow-files.js';
import { bankMember, ownersOfRows, type ParentRow } from './batch-parents.js';
import { actionKey, type ActionType } from './followup-ledger.js';
import { checkDocument, uploadDocument, type OtherDocument } from './packet-files.js';
import { earlierFollowUp, sendFollowUp, type SendContext } from './send-follow-up.js';

export const ACTION_TYPES: readonly ActionType[] = ['cancel', 'suspend', 'resume'];

export type ActionResult = 'sent' | 'sent_before' | 'skipped' | 'refused' | 'lost' | 'waiting' | 'needs_lift';

export interface ActionLine {
  row: number;
  dealId: string;
  /** The docflow acted on. */
  docflowId: string;
  /** The action's own docflow. */
  actionDocflowId: string;
  /** The docflow's state after the action (the gateway's, read again), or as it stood. */
  state: string;
  result: ActionResult;
  reason: string;
}

/** Which docflows: rows by number, deals by id, or the batch's duplicates. */
export type ActionSelection = { rows: number[] } | { deals: string[] } | { duplicates: true };

export interface ActionOptions extends SendContext {
  action: ActionType;
  cause: string;
  meta: BatchMeta & { total: number };
  bank: string;
  profile: BankProfile;
  parents: readonly ParentRow[];
  selection: ActionSelection;
  /** The batch's input, when it is no longer where it was loaded from. */
  input?: string;
  /** A document the action needs (a consent): checked and uploaded once, with its `.sig` beside it. */
  document?: string;
  baseUrl: string;
  operator: string;
  concurrency?: number;
  retry?: GatewayRetryOptions;
  logger?: Logger;
}

interface Target {
  row: number;
  dealId: string;
  docflowId: string;
  duplicate: boolean;
}

/** The dealIds of a file, one a line; blank lines and `#` comments skipped. */
export async function readDealIds(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch((err: unknown) => {
    throw new UsageError(`--deals ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  });
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/** The chosen docflows, and a line for each choice that names none. */
async function targetsOf(o: ActionOptions, line: (l: Omit<ActionLine, 'actionDocflowId' | 'state'>) => void): Promise<Target[]> {
  const targets: Target[] = [];
  const s = o.selection;
  if ('duplicates' in s) {
    for (const d of await duplicatesOfBatch(o.db.kysely, o.meta.id))
      targets.push({ row: d.row, dealId: d.deal_id, docflowId: d.docflow_id, duplicate: true });
  } else if ('rows' in s) {
    for (const n of s.rows) {
      const p = o.parents[n - 1];
      if (!p)
        line({
          row: n,
          dealId: '',
          docflowId: '',
          result: 'skipped',
          reason: `batch ${o.meta.id} has no row ${n} (it has ${o.meta.total})`,
        });
      else if (!p.docflowId)
        line({ ...p, docflowId: '', result: 'skipped', reason: `the row has no docflow (it is ${p.outcome}): nothing sent` });
      else targets.push({ row: p.row, dealId: p.dealId, docflowId: p.docflowId, duplicate: false });
    }
  } else {
    for (const dealId of s.deals) {
      const rows = o.parents.filter((p) => p.dealId === dealId);
      const p = rows.find((r) => r.docflowId) ?? rows[0];
      if (!p) line({ row: 0, dealId, docflowId: '', result: 'skipped', reason: `no row of batch ${o.meta.id} has this deal` });
      else if (!p.docflowId)
        line({ ...p, docflowId: '', result: 'skipped', reason: `the deal has no docflow (its row is ${p.outcome}): nothing sent` });
      else targets.push({ row: p.row, dealId: p.dealId, docflowId: p.docflowId, duplicate: false });
    }
  }
  const seen = new Set<string>();
  return targets.filter((t) => !seen.has(t.docflowId) && seen.add(t.docflowId));
}

/** Why a duplicate in this state is not cancelled, and what it needs; undefined for one in processing (cancelled). */
function duplicateNote(state: string, o: ActionOptions): { result: ActionResult; reason: string } | undefined {
  if (state === 'sent') return undefined;
  if (state === 'suspended')
    return {
      result: 'skipped',
      reason: `a second docflow of the deal, waiting for signatures: it is never signed (to-sign and sign leave it alone), so it never reaches the registry`,
    };
  if (state === 'completed')
    return {
      result: 'needs_lift',
      reason: `a second docflow of the deal, registered: it needs a lift (realty-batch run <lifts file> --type lift) of the mortgage record it made`,
    };
  if (state === 'error') return { result: 'skipped', reason: 'a second docflow of the deal, ended in error: nothing to cancel' };
  return {
    result: 'skipped',
    reason: `a second docflow of the deal, ${state}: not in processing at the registry yet; run ${o.action} again once it is sent`,
  };
}

export async function actOnBatch(o: ActionOptions): Promise<ActionLine[]> {
  if ('duplicates' in o.selection && o.action !== 'cancel')
    throw new UsageError('--duplicates goes with cancel: a second docflow of a deal is cancelled, never suspended or resumed.');
  const lines: ActionLine[] = [];
  const line = (l: Omit<ActionLine, 'actionDocflowId' | 'state'> & Partial<Pick<ActionLine, 'actionDocflowId' | 'state'>>) =>
    lines.push({ actionDocflowId: '', state: '', ...l });
  const targets = await targetsOf(o, line);
  const owners = await ownersOfRows(o.meta, o.input, new Set(targets.map((t) => t.row)));
  const retry = { ...o.retry, onRetry: (err: Error) => o.logger?.warn({ err: { message: err.message } }, 'a call is tried again') };

  // The document is checked before anything is sent, uploaded once and only when an action goes out.
  let document: Promise<OtherDocument> | undefined;
  const checked = o.document === undefined ? undefined : await checkDocument(dirname(resolve(o.document)), basename(o.document));
  if (typeof checked === 'string') throw new UsageError(`--document: ${checked}; nothing was sent.`);
  const documentOnce = (): Promise<OtherDocument> | undefined =>
    checked && (document ??= uploadDocument(o.client, o.baseUrl, checked, o.timeoutMs, retry));

  const one = async (t: Target): Promise<void> => {
    const base = { row: t.row, dealId: t.dealId, docflowId: t.docflowId };
    const key = actionKey(o.bank, t.docflowId, o.action);
    const earlier = await earlierFollowUp(o, key);
    if (earlier?.kind === 'before')
      return void line({
        ...base,
        actionDocflowId: earlier.docflowId,
        result: 'sent_before',
        reason: `${o.action} was asked before (${earlier.at}): nothing sent again`,
      });
    if (earlier?.kind === 'lost') return void line({ ...base, result: 'lost', reason: earlier.reason });
    const parent = await withGatewayRetry(() => o.client.getDocflow(t.docflowId), retry);
    const note = t.duplicate ? duplicateNote(parent.state, o) : undefined;
    if (note) return void line({ ...base, state: parent.state, ...note });
    if (parent.state !== 'sent')
      return void line({
        ...base,
        state: parent.state,
        result: 'skipped',
        reason: `its docflow is ${parent.state}: an action goes only to a docflow in processing at the registry (sent)`,
      });
    const persons = owners.get(t.row);
    if (!persons)
      return void line({
        ...base,
        state: parent.state,
        result: 'refused',
        reason: `the row's owners cannot be read from the input (it no longer validates): nothing sent`,
      });
    const doc = documentOnce();
    const options = {
      actionType: o.action,
      docflowId: t.docflowId,
      cause: o.cause,
      docflowMember: [...persons, bankMember(o.profile)],
      ...(doc && { document: [await doc] }),
    };
    const sent = await sendFollowUp(o, key, { batch: o.meta.id, row: t.row }, options);
    if (sent.kind === 'before')
      return void line({
        ...base,
        actionDocflowId: sent.docflowId,
        result: 'sent_before',
        reason: `${o.action} was asked before (${sent.at}): nothing sent again`,
      });
    if (sent.kind !== 'sent') {
      line({ ...base, state: parent.state, result: sent.kind, reason: sent.reason });
      // A request that went out is audited whatever its answer: refused by the gateway, or lost on the way back.
      if (sent.kind === 'lost' || sent.kind === 'refused')
        await recordAction(o.db, {
          who: o.operator,
          action: o.action,
          batch: o.meta.id,
          dealId: t.dealId,
          detail: `${o.action}${t.duplicate ? ' (a duplicate)' : ''} on docflow ${t.docflowId}: ${sent.kind === 'lost' ? 'its answer was lost' : 'refused by the gateway'}`,
        });
      return;
    }
    // The docflow as it is after the action: the registry acts on it at once (a cancelled one ends in error).
    const after = await withGatewayRetry(() => o.client.getDocflow(t.docflowId), retry).catch(() => parent);
    line({
      ...base,
      actionDocflowId: sent.docflowId,
      state: after.state,
      result: 'sent',
      reason: `${o.action} sent (its docflow ${sent.state})`,
    });
    await recordAction(o.db, {
      who: o.operator,
      action: o.action,
      batch: o.meta.id,
      dealId: t.dealId,
      detail: `action ${sent.docflowId} (${o.action}${t.duplicate ? ', a duplicate' : ''}) on docflow ${t.docflowId}: it is ${after.state}`,
    });
  };
  await eachLimit(targets, o.concurrency ?? 4, async (t) => {
    try {
      await one(t);
    } catch (err) {
      if (err instanceof SessionRefusedError) throw err;
      line({
        row: t.row,
        dealId: t.dealId,
        docflowId: t.docflowId,
        result: 'refused',
        reason: `${maskRegistryText((err as Error).message)}: nothing sent`,
      });
    }
  });
  return lines.sort((a, b) => a.row - b.row || a.dealId.localeCompare(b.dealId));
}

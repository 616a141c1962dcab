/**
 * The operator actions' table: who did what to the system of record, when (`ledger --resolve`,
 * `retry`, `track --reset-cursor`, schedule changes, the dashboard's actions). What an auditor
 * asks first after a night that went wrong; never personal data, only ids and the action.
 */
import { userInfo } from 'node:os';
import type { Database, Trx } from './database.js';

export interface OperatorAction {
  /** The dashboard's login, `--operator`, or the OS user. */
  who: string;
  /** The command or the dashboard's route pattern, e.g. `ledger --resolve`, `retry`, `PUT /queues/api/queues/:queueName/pause` (its ids in `detail`). */
  action: string;
  batch?: string | undefined;
  dealId?: string | undefined;
  /** What was asked and what came of it: ids, counts, states. */
  detail: string;
}

export interface RecordedAction extends Required<Omit<OperatorAction, 'batch' | 'dealId'>> {
  id: number;
  at: string;
  batch: string | null;
  dealId: string | null;
}

/** Who runs this command: `--operator` when given, else the OS user (`unknown` when there is none). */
export function commandOperator(flag?: string): string {
  if (flag && flag.trim() !== '') return flag.trim();
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

export async function recordAction(db: Database, action: OperatorAction): Promise<void> {
  await recordActionIn(db.kysely, action);
}

/** `recordAction` inside a transaction: the action is kept with the change it made, or neither. */
export async function recordActionIn(trx: Trx, action: OperatorAction): Promise<void> {
  await trx
    .insertInto('operator_actions')
    .values({
      at: new Date().toISOString(),
      who: action.who,
      action: action.action,
      batch: action.batch ?? null,
      deal_id: action.dealId ?? null,
      detail: action.detail,
    })
    .execute();
}

/** The latest actions first; of one deal, or of one batch, when asked. */
export async function listActions(
  db: Database,
  options: { limit?: number; dealId?: string; batch?: string } = {},
): Promise<RecordedAction[]> {
  let q = db.kysely
    .selectFrom('operator_actions')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(options.limit ?? 200);
  if (options.dealId !== undefined) q = q.where('deal_id', '=', options.dealId);
  if (options.batch !== undefined) q = q.where('batch', '=', options.batch);
  const rows = await q.execute();
  return rows.map((r) => ({
    id: Number(r.id),
    at: r.at,
    who: r.who,
    action: r.action,
    batch: r.batch,
    dealId: r.deal_id,
    detail: r.detail,
  }));
}

/**
 * The payments file (`realty-batch payments <batch>`): every deal of a batch whose
 * docflow waits for the state duty, for the bank's accounting: dealId, docflowId, uin,
 * amount, payer (an organization by name and INN, a person by initials: src/privacy/payer.ts),
 * since. Once the registry learns of a payment it moves the docflow on by itself; the news
 * feed follower shows it, and the row leaves this file the next time it is written. So the
 * file is only as new as the follower's last complete read of the feed: `readStatesAge` says
 * how old, and whether a follower seems to run at all. Written whole (a temporary file, then
 * renamed).
 */
import { createAtomicFile } from '../files/atomic-file.js';
import { isXlsxPath } from '../input/rejects.js';
import { csvSink } from './csv-sink.js';
import { createTableFile, type TableFile } from './table-file.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';
import { batchBank, readDocflowStatuses, rowDocflows } from '../ledger/docflows.js';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import { SUBMITTED_OUTCOMES, type OutcomeRecord } from '../domain/outcome.js';
import { describeStatesAge as describeFeedAge, START_A_FOLLOWER, type StatesAge } from '../feed/states-age.js';
import type { Lang } from '../config.js';
import { columnHeaders } from './russian.js';

export const PAYMENT_COLUMNS = ['dealId', 'docflowId', 'uin', 'amount', 'payer', 'since'] as const;
export type PaymentLine = Record<(typeof PAYMENT_COLUMNS)[number], string>;

export interface PaymentsOptions {
  redis: Redis;
  keys: Keys;
  /** The system of record: the docflows' states. */
  db: Database;
  batch: string;
  total: number;
  out: string;
  /**
   * For Russian Excel: BOM, `;`, CRLF, ids as text (the default: the file is for the bank's
   * accounting, read by a person); false: UTF-8 with `,`.
   */
  excel?: boolean;
  /** The headers' language in Excel's CSV and in a workbook (russian.ts); JSON Lines and the plain CSV keep the names. */
  lang?: Lang;
}

/** The batch's deals that wait for a payment, in input order; a docflow two rows share is listed once. */
export async function* waitingPayments(redis: Redis, keys: Keys, db: Database, batch: string, total: number): AsyncGenerator<PaymentLine> {
  const seen = new Set<string>();
  const bank = await batchBank(db, batch);
  let page: OutcomeRecord[] = [];
  const flush = async function* (): AsyncGenerator<PaymentLine> {
    const statuses = await readDocflowStatuses(db, rowDocflows(bank, page));
    for (let i = 0; i < page.length; i++) {
      const status = statuses[i];
      const record = page[i]!;
      if (status?.state !== 'suspended' || status.requirement !== 'payment' || seen.has(record.docflowId!)) continue;
      seen.add(record.docflowId!);
      yield {
        dealId: record.dealId,
        docflowId: record.docflowId!,
        uin: status.paymentUin ?? '',
        amount: status.paymentAmount ?? '',
        payer: status.payer ?? '',
        since: status.requirementAt ?? status.stateAt,
      };
    }
    page = [];
  };
  for await (const record of batchOutcomes(redis, keys, db, batch, total)) {
    if (!SUBMITTED_OUTCOMES.has(record.outcome) || !record.docflowId) continue;
    page.push(record);
    if (page.length >= 1000) yield* flush();
  }
  yield* flush();
}

export async function writePayments(options: PaymentsOptions): Promise<{ file: string; rows: number; amount: number }> {
  const { out } = options;
  const jsonl = out.endsWith('.jsonl');
  const xlsx = isXlsxPath(out);
  const excel = options.excel ?? true;
  const headers = columnHeaders(PAYMENT_COLUMNS, !jsonl && (xlsx || excel) ? options.lang : 'en');
  const sink = jsonl || xlsx ? undefined : csvSink(PAYMENT_COLUMNS, excel, headers);
  const file: TableFile = xlsx
    ? await createTableFile(out, PAYMENT_COLUMNS, { headers })
    : await createAtomicFile(out, { through: sink ? [sink] : [] });
  let rows = 0;
  let amount = 0;
  try {
    for await (const line of waitingPayments(options.redis, options.keys, options.db, options.batch, options.total)) {
      rows++;
      for (const part of line.amount.split(' ')) amount += Number(part) || 0;
      await file.write(sink || xlsx ? line : `${JSON.stringify(line)}\n`);
    }
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
  return { file: out, rows, amount };
}

/** One sentence for stderr: how old the states are, and, when no follower seems to run, which command runs one. */
export function describeStatesAge(age: StatesAge): string {
  if (age.asOf === undefined)
    return `states: the news feed was never read, so no deal's payment is known; no follower seems to run: ${START_A_FOLLOWER}.`;
  return describeFeedAge(age, 'a deal paid since may still be listed');
}

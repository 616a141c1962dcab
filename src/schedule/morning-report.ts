/**
 * The morning report (`schedule add --report-cron`): where every recent batch's deals
 * stand at the registry, written to the outbox as `report-<date>.json` and `.csv`, and
 * POSTed to `--notify-url`. It covers the batches loaded in the last day and every older
 * one (still within its retention) that is not registered yet: the stuck ones stay in the
 * report until they are done with. Nothing personal: counts, ids, file names.
 */
import { basename, join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import type { Logger } from '../logger.js';
import { writeFileAtomically } from '../files/atomic-file.js';
// The rule of every CSV the tool writes: a cell a spreadsheet would run is written as text.
import { QUOTE_LINE_BREAKS, safeCell } from '../input/csv-cell.js';
import { createBatchStore } from '../batch/batch-store.js';
import { DEFAULT_KIND } from '../docflows/registry.js';
import { batchStates } from '../batch/batch-states.js';
import { DOCFLOW_STATES, OUTCOMES, type Outcome } from '../domain/outcome.js';
import { notify } from './notify.js';
import { publish, withStaging } from './safe-files.js';
import type { TickData } from './scheduler.js';

/** Batches looked at, newest first: as many as `status` lists. */
const MAX_BATCHES = 50;
const DAY_MS = 24 * 3600 * 1000;

export interface ReportBatch {
  batch: string;
  /** The docflow type its rows file (the gateway's name). */
  type: string;
  /** The input's name (never its path on the host). */
  file: string;
  createdAt: string;
  rows: number;
  done: boolean;
  registered: boolean;
  outcomes: Partial<Record<Outcome, number>>;
  states: Record<string, number>;
  waitingFor: Record<string, number>;
  oldestUnfinished?: { row: number; since: string };
}

export interface MorningReport {
  schedule: string;
  at: string;
  batches: ReportBatch[];
  /** Rows over every batch reported: registered batches, and rows waiting for the bank. */
  totals: { batches: number; registered: number; payment: number; signature: number; error: number };
}

export async function buildMorningReport(
  redis: Redis,
  keys: Keys,
  db: Database,
  schedule: string,
  now = Date.now(),
): Promise<MorningReport> {
  const store = createBatchStore(redis, keys, db);
  const batches: ReportBatch[] = [];
  for (const { id, createdMs } of await store.list(MAX_BATCHES)) {
    const meta = await store.get(id);
    if (!meta || meta.state === 'failed') continue;
    const recent = now - createdMs <= DAY_MS;
    const states = await batchStates(redis, keys, db, meta);
    if (!recent && states.registered) continue;
    const line: ReportBatch = {
      batch: meta.id,
      type: meta.type || DEFAULT_KIND.type,
      // Its name, not where it lay on the host: the report goes to a webhook.
      file: basename(meta.file),
      createdAt: meta.createdAt,
      rows: meta.total ?? 0,
      done: states.done,
      registered: states.registered,
      outcomes: Object.fromEntries(Object.entries(states.outcomes).filter(([, n]) => n > 0)),
      states: states.states,
      waitingFor: states.waitingFor,
    };
    if (states.oldestUnfinished) line.oldestUnfinished = states.oldestUnfinished;
    batches.push(line);
  }
  const sum = (pick: (b: ReportBatch) => number) => batches.reduce((n, b) => n + pick(b), 0);
  return {
    schedule,
    at: new Date(now).toISOString(),
    batches,
    totals: {
      batches: batches.length,
      registered: batches.filter((b) => b.registered).length,
      payment: sum((b) => b.waitingFor.payment ?? 0),
      signature: sum((b) => b.waitingFor.signature ?? 0),
      error: sum((b) => b.states.error ?? 0),
    },
  };
}

/**
 * One line per batch: its counts by outcome and by state, as columns a spreadsheet sums. The
 * input's name is the bank's (a file dropped in the inbox as `=HYPERLINK(...).csv` or `-2+3.csv`):
 * written as text, never run (src/input/csv-cell.ts).
 */
export function reportCsv(report: MorningReport): string {
  const columns = [
    'batch',
    'file',
    'createdAt',
    'rows',
    'done',
    'registered',
    ...OUTCOMES,
    ...DOCFLOW_STATES.map((s) => `state_${s}`),
    'waiting_payment',
    'waiting_signature',
    'oldestUnfinishedSince',
    'type',
  ];
  const records = report.batches.map((b) => [
    b.batch,
    b.file,
    b.createdAt,
    b.rows,
    b.done ? 'yes' : 'no',
    b.registered ? 'yes' : 'no',
    ...OUTCOMES.map((o) => b.outcomes[o] ?? 0),
    ...DOCFLOW_STATES.map((s) => b.states[s] ?? 0),
    b.waitingFor.payment ?? 0,
    b.waitingFor.signature ?? 0,
    b.oldestUnfinished?.since ?? '',
    b.type,
  ]);
  return stringify(records, { header: true, columns, cast: { string: safeCell }, quoted_match: QUOTE_LINE_BREAKS });
}

/**
 * The report's day (YYYY-MM-DD) in the schedule's zone (`--tz`; the host's when absent), as its
 * cron reads the clock: a 07:00 report in Vladivostok, 21:00 UTC the evening before, is named for
 * its own morning, never for the day before.
 */
export function reportDay(at: Date, tz?: string): string {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** Builds the report, writes it to the outbox (whole, never through a link), and POSTs it. */
export async function writeMorningReport(
  data: Pick<TickData, 'name' | 'outbox' | 'notifyUrl' | 'tz'>,
  ctx: { redis: Redis; keys: Keys; db: Database; logger: Logger },
): Promise<{ json: string; csv: string; report: MorningReport }> {
  const report = await buildMorningReport(ctx.redis, ctx.keys, ctx.db, data.name);
  const day = reportDay(new Date(report.at), data.tz);
  const json = join(data.outbox, `report-${day}.json`);
  const csv = join(data.outbox, `report-${day}.csv`);
  await withStaging(data.outbox, async (stage) => {
    await writeFileAtomically(join(stage, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFileAtomically(join(stage, 'report.csv'), reportCsv(report));
    await publish(join(stage, 'report.json'), json);
    await publish(join(stage, 'report.csv'), csv);
  });
  // Which report was written, for which day: the database keeps it whatever becomes of Redis.
  await ctx.db.kysely
    .insertInto('reports')
    .values({ schedule: data.name, day, at: report.at, file: json, totals: JSON.stringify(report.totals) })
    .onConflict((oc) => oc.columns(['schedule', 'day']).doUpdateSet({ at: report.at, file: json, totals: JSON.stringify(report.totals) }))
    .execute();
  const t = report.totals;
  ctx.logger.info(
    { schedule: data.name, report: json, totals: t },
    `morning report: ${t.batches} batches, ${t.registered} registered; waiting: ${t.payment} payments, ${t.signature} signatures; ${t.error} refused by the registry`,
  );
  if (data.notifyUrl) await notify(data.notifyUrl, { kind: 'report', ...report }, ctx.logger);
  return { json, csv, report };
}

/**
 * Nightly runs from an inbox: a BullMQ Job Scheduler per inbox on the `schedule`
 * queue. Registering again with the same name updates it (upsertJobScheduler),
 * never duplicates it; any `realty-batch work` executes the ticks.
 */
import { createHash } from 'node:crypto';
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { CronExpressionParser } from 'cron-parser';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Lang } from '../config.js';
import { UsageError } from '../errors.js';
import type { Keys } from '../redis/keys.js';
import type { Queue } from 'bullmq';
import { openQueue } from '../queue/deal-queue.js';
import type { TickDeadline } from '../batch/deadline.js';

export const SCHEDULE_QUEUE = 'schedule';
export const TICK_JOB = 'tick';
/** The morning report's jobs (`--report-cron`), on the same queue, under `<name>:report`. */
export const REPORT_JOB = 'report';
export const reportSchedulerName = (name: string): string => `${name}:report`;

/** What each tick needs: the job template's data. Paths are absolute, as every worker host must see them. */
export interface TickData {
  name: string;
  inbox: string;
  outbox: string;
  profile: string;
  /** `--type`: what every file of the inbox files (src/docflows/, its gateway name); absent: registrations. */
  type?: string;
  notifyUrl?: string;
  /** `--ready-suffix`: a file is taken only once `<name><suffix>` exists; no settle time then. */
  readySuffix?: string;
  /** `--settle-ms`: how long a file must stay unchanged before it is taken (default one minute). */
  settleMs?: number;
  /** How long "this content ran" is remembered (REALTY_LEDGER_DAYS where `schedule` ran; default 400 days). */
  doneMs?: number;
  /** `--lang`: the attention file's hints (where `schedule add` ran: its flag, else its locale). English when absent (schedules added before). */
  lang?: Lang;
  /** `--deadline`: when each tick stops waiting for its batches (a clock time in `tz`, or a duration from the tick's start). */
  deadline?: TickDeadline;
  /** The schedule's `--tz`, for a clock-time deadline (the host's zone when absent). */
  tz?: string;
  /**
   * `--files-root` (absolute): each tick's load lets rows name their agreementFile and
   * agreementSignatureFiles by absolute path under it (else only inside the inbox's folder tree).
   */
  filesRoot?: string;
  /**
   * How each file is read, as `run` reads it (`--format`, `--encoding`, `--delimiter`, `--sheet`,
   * and `--mapping`: its absolute path, read again at each tick). Absent: detected per file.
   */
  reading?: TickReading;
}

/** A schedule's reading flags, as stored with it. */
export interface TickReading {
  format?: string;
  encoding?: string;
  delimiter?: string;
  sheet?: string;
  mapping?: string;
}

export interface ScheduleOptions extends Omit<TickData, 'name'> {
  /** Defaults to `inbox-<hash of the inbox path>`. */
  name?: string;
  cron: string;
  tz?: string;
  /** `--report-cron`: when to write the morning report of the batches' states (same time zone). */
  reportCron?: string;
}

export interface ScheduleInfo {
  name: string;
  cron: string;
  tz?: string;
  next?: string;
  data?: TickData;
  /** The morning report's scheduler, when the schedule has one. */
  report?: { cron: string; next?: string };
}

export function scheduleQueue(redis: Redis, keys: Keys): Queue<TickData> {
  return openQueue<TickData, unknown>(redis, keys, SCHEDULE_QUEUE);
}

export function defaultScheduleName(inbox: string): string {
  return `inbox-${createHash('sha256').update(resolve(inbox)).digest('hex').slice(0, 10)}`;
}

/** Five fields, or six with seconds first; an unknown time zone or a bad field is a usage error naming `flag`. */
export function checkCron(cron: string, tz?: string, flag = '--cron'): Date {
  const fields = cron.trim().split(/\s+/).length;
  if (fields !== 5 && fields !== 6)
    throw new UsageError(`${flag} ${JSON.stringify(cron)} needs 5 fields (minute hour day month weekday) or 6 (seconds first).`);
  try {
    return CronExpressionParser.parse(cron, tz ? { tz } : {})
      .next()
      .toDate();
  } catch (err) {
    throw new UsageError(`${flag} ${JSON.stringify(cron)}${tz ? ` --tz ${tz}` : ''} is not valid: ${(err as Error).message}.`);
  }
}

/**
 * When a tick that began at `start` stops waiting: a duration after it, or the next such
 * clock time after it in the schedule's zone (cron-parser knows the zone's offsets and DST).
 */
export function tickDeadline(deadline: TickDeadline, start: Date, tz?: string): number {
  if ('afterMs' in deadline) return start.getTime() + deadline.afterMs;
  const [h, m, s] = deadline.at;
  return CronExpressionParser.parse(`${s} ${m} ${h} * * *`, { currentDate: start, ...(tz ? { tz } : {}) })
    .next()
    .getTime();
}

/**
 * The inbox and the outbox must be two folders, neither inside the other (their
 * real paths, through symbolic links, where they exist): a tick would otherwise
 * take its own outputs for inputs.
 */
export async function checkFoldersApart(inbox: string, outbox: string): Promise<void> {
  const real = (path: string): Promise<string> => realpath(path).catch(() => resolve(path));
  const [a, b] = await Promise.all([real(inbox), real(outbox)]);
  const within = (inner: string, outer: string): boolean => {
    const rel = relative(outer, inner);
    return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
  };
  if (within(a, b) || within(b, a)) {
    throw new UsageError(
      `--inbox ${inbox} and --outbox ${outbox} must be two separate folders, neither inside the other, or each tick would take its own outputs for inputs.`,
    );
  }
}

/** A ready suffix names a marker beside each file: never a path, never a name the inbox skips as temporary. */
export function checkReadySuffix(suffix: string): void {
  if (!suffix || /[/\\\0]/.test(suffix) || /\.(part|tmp|crdownload|partial)$/i.test(suffix) || suffix === '.' || suffix === '..') {
    throw new UsageError(`--ready-suffix ${JSON.stringify(suffix)} is not usable: give the end of a marker's name, such as .ready.`);
  }
}

export async function upsertSchedule(redis: Redis, keys: Keys, options: ScheduleOptions): Promise<ScheduleInfo> {
  const next = checkCron(options.cron, options.tz);
  const reportNext = options.reportCron === undefined ? undefined : checkCron(options.reportCron, options.tz, '--report-cron');
  await checkFoldersApart(options.inbox, options.outbox);
  if (options.readySuffix !== undefined) checkReadySuffix(options.readySuffix);
  const name = options.name ?? defaultScheduleName(options.inbox);
  const data: TickData = { name, inbox: resolve(options.inbox), outbox: resolve(options.outbox), profile: resolve(options.profile) };
  if (options.notifyUrl) data.notifyUrl = options.notifyUrl;
  if (options.readySuffix !== undefined) data.readySuffix = options.readySuffix;
  if (options.settleMs !== undefined) data.settleMs = options.settleMs;
  if (options.doneMs !== undefined) data.doneMs = options.doneMs;
  if (options.lang !== undefined) data.lang = options.lang;
  if (options.deadline !== undefined) data.deadline = options.deadline;
  if (options.tz !== undefined) data.tz = options.tz;
  if (options.filesRoot !== undefined) data.filesRoot = resolve(options.filesRoot);
  if (options.type !== undefined) data.type = options.type;
  const reading = storedReading(options.reading);
  if (reading) data.reading = reading;
  const queue = scheduleQueue(redis, keys);
  try {
    await queue.upsertJobScheduler(
      name,
      { pattern: options.cron, ...(options.tz ? { tz: options.tz } : {}) },
      { name: TICK_JOB, data, opts: { removeOnComplete: 200, removeOnFail: 200 } },
    );
    // Added with the schedule, replaced with it, and gone when it is added again without one.
    if (options.reportCron !== undefined)
      await queue.upsertJobScheduler(
        reportSchedulerName(name),
        { pattern: options.reportCron, ...(options.tz ? { tz: options.tz } : {}) },
        { name: REPORT_JOB, data, opts: { removeOnComplete: 50, removeOnFail: 50 } },
      );
    else await queue.removeJobScheduler(reportSchedulerName(name));
  } finally {
    await queue.close();
  }
  const info: ScheduleInfo = { name, cron: options.cron, next: next.toISOString(), data, ...(options.tz ? { tz: options.tz } : {}) };
  if (options.reportCron !== undefined && reportNext) info.report = { cron: options.reportCron, next: reportNext.toISOString() };
  return info;
}

export async function listSchedules(redis: Redis, keys: Keys): Promise<ScheduleInfo[]> {
  const queue = scheduleQueue(redis, keys);
  try {
    const schedulers = await queue.getJobSchedulers(0, -1, true);
    const reports = new Map(schedulers.filter((s) => s.name === REPORT_JOB).map((s) => [s.key, s]));
    return schedulers
      .filter((s) => s.name !== REPORT_JOB)
      .map((s) => {
        const info: ScheduleInfo = { name: s.key, cron: s.pattern ?? `every ${s.every} ms` };
        if (s.tz) info.tz = s.tz;
        if (s.next) info.next = new Date(s.next).toISOString();
        if (s.template?.data) info.data = s.template.data;
        const report = reports.get(reportSchedulerName(s.key));
        if (report) info.report = { cron: report.pattern ?? '', ...(report.next ? { next: new Date(report.next).toISOString() } : {}) };
        return info;
      });
  } finally {
    await queue.close();
  }
}

export async function removeSchedule(redis: Redis, keys: Keys, name: string): Promise<boolean> {
  const queue = scheduleQueue(redis, keys);
  try {
    await queue.removeJobScheduler(reportSchedulerName(name));
    return await queue.removeJobScheduler(name);
  } finally {
    await queue.close();
  }
}

/** The reading flags given (the mapping's path made absolute), or undefined when none was. */
function storedReading(given: TickReading | undefined): TickReading | undefined {
  const reading = Object.fromEntries(Object.entries(given ?? {}).filter(([, v]) => v !== undefined)) as TickReading;
  if (reading.mapping !== undefined) reading.mapping = resolve(reading.mapping);
  return Object.keys(reading).length > 0 ? reading : undefined;
}

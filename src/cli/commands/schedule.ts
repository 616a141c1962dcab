/**
 * `realty-batch schedule add|list|remove`: nightly runs of every new file of an inbox
 * (any `realty-batch work` executes the ticks). The first form, `schedule --inbox ...`,
 * still adds; `schedule --list` and `schedule --remove` still work and say their new form.
 */
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Lang } from '../../config.js';
import { UsageError } from '../../errors.js';
import { parseTickDeadline } from '../../batch/deadline.js';
import { loadProfile } from '../../input/profile.js';
import { loadMapping } from '../../input/mapping.js';
import { KIND_NAMES, kindNamed, readingColumns } from '../../docflows/registry.js';
import { parseEncodingFlag, type InputEncoding } from '../../input/decode.js';
import { parseDelimiterFlag, parseFormatFlag, type InputFormat } from '../../input/open-input.js';
import {
  checkFoldersApart,
  checkReadySuffix,
  defaultScheduleName,
  listSchedules,
  removeSchedule,
  upsertSchedule,
} from '../../schedule/scheduler.js';
import { type CliContext, type Env } from '../environment.js';
import { LANG_HELP, langFlag, nonNegativeInt } from '../flags.js';
import { commandOperator, recordAction } from '../../db/operator-actions.js';
import { withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

export interface ScheduleAddFlags {
  /** Who adds it, for the audit of operator actions (default: the OS user). */
  operator?: string;
  inbox: string;
  outbox: string;
  profile: string;
  cron: string;
  tz?: string;
  notifyUrl?: string;
  name?: string;
  readySuffix?: string;
  settleMs?: number;
  lang?: Lang;
  reportCron?: string;
  deadline?: string;
  filesRoot?: string;
  type?: string;
  /** Reading flags, as `run` takes them. */
  format?: InputFormat;
  encoding?: InputEncoding | 'auto';
  delimiter?: string;
  mapping?: string;
  sheet?: string;
}

export interface ScheduleRemoveFlags {
  inbox?: string;
  operator?: string;
}

/** `schedule` itself: the add flags, none of them required here, and the old `--list` and `--remove`. */
export interface ScheduleFlags extends Partial<ScheduleAddFlags> {
  list?: boolean;
  remove?: boolean;
}

/** The first form's flags, once each one `schedule add` requires is there (in this order, as before). */
function addFlags(opts: ScheduleFlags): ScheduleAddFlags {
  const need = (value: string | undefined, flag: string): string => {
    if (!value) throw new UsageError(`schedule needs --${flag} (or --list, or --remove).`);
    return value;
  };
  return {
    ...opts,
    inbox: need(opts.inbox, 'inbox'),
    outbox: need(opts.outbox, 'outbox'),
    profile: need(opts.profile, 'profile'),
    cron: need(opts.cron, 'cron'),
  };
}

/** The flags of a schedule; `required` on `schedule add`, where commander checks them. */
function addScheduleOptions(cmd: Command, required: boolean): Command {
  const needed = (flags: string, description: string) =>
    required ? cmd.requiredOption(flags, description) : cmd.option(flags, description);
  needed('--inbox <dir>', 'where banks drop exports');
  needed('--outbox <dir>', 'where <file>.results.csv, .attention.csv and .summary.json land');
  needed('--profile <bank.json>', 'the bank profile');
  needed('--cron <expr>', 'five fields, or six with seconds first (e.g. "0 30 1 * * *")');
  return (
    cmd
      .option('--operator <name>', 'who adds (or removes) it, for the audit of operator actions (default: the OS user)')
      .option('--tz <zone>', 'time zone of the cron, e.g. Europe/Moscow')
      .option('--notify-url <url>', "POST each run's summary (JSON) to this webhook, with retries")
      .option('--name <name>', "the schedule's name (default: from the inbox path)")
      .option('--ready-suffix <suffix>', 'take <file> only once <file><suffix> exists (e.g. .ready); the marker goes with its file')
      .option(
        '--settle-ms <n>',
        'without --ready-suffix: take a file once it stayed unchanged this long (default 60000)',
        nonNegativeInt('--settle-ms'),
      )
      .option('--lang <ru|en>', `${LANG_HELP}; stored with the schedule`, langFlag)
      .option(
        '--report-cron <expr>',
        'also write a morning report (report-<date>.json and .csv in the outbox, and to --notify-url) of where the recent batches stand at the registry',
      )
      .option(
        '--files-root <dir>',
        "each tick's rows may name agreementFile and agreementSignatureFiles by absolute path, and they may lie under <dir> (default: only inside the inbox's folder)",
      )
      .option('--type <type>', `what every file of the inbox files: ${KIND_NAMES}; default registration`)
      .option(
        '--deadline <when>',
        "each tick stops waiting then: a clock time (06:00, in --tz) or a duration from the tick's start (5h); unfinished rows are written pending and their file waits in the inbox for the next tick",
      )
      // Each file read as `run` reads it (docs/input-format.md); the mapping file is read again at every tick.
      .option('--format <format>', "every file's format, as run's --format; default from each file's extension", parseFormatFlag)
      .option('--encoding <auto|utf8|utf8-bom|windows-1251>', "every file's encoding, as run's --encoding", parseEncodingFlag)
      .option('--delimiter <auto|,|;|tab>', "CSV files' delimiter, as run's --delimiter", parseDelimiterFlag)
      .option('--mapping <map.json>', "a bank's own headers renamed to fields, defaults and values, as run's --mapping")
      .option('--sheet <name>', 'xlsx files: the sheet to read (default: the first)')
  );
}

export function registerScheduleCommand(program: Command, context: CliContext): Command {
  const schedule = program
    .command('schedule')
    .description('run every new file of an inbox on a cron schedule (any `realty-batch work` executes the ticks); add, list, remove');
  addScheduleOptions(schedule, false)
    .option('--list', 'list the schedules (deprecated: schedule list)')
    .option('--remove', 'remove the schedule named by --name (or by --inbox) (deprecated: schedule remove <name>)')
    .action(async (_flags: unknown, cmd: Command) => {
      const opts = cmd.opts<ScheduleFlags>();
      const env = context.environment();
      if (opts.list) {
        console.error('realty-batch: schedule --list is deprecated: use realty-batch schedule list.');
        return list(env);
      }
      if (opts.remove) {
        console.error('realty-batch: schedule --remove is deprecated: use realty-batch schedule remove <name> (or --inbox <dir>).');
        const name = opts.name ?? (opts.inbox ? defaultScheduleName(opts.inbox) : undefined);
        if (!name) throw new UsageError('schedule --remove needs --name or --inbox.');
        return remove(env, context, name, opts.operator);
      }
      return add(env, addFlags(opts));
    });

  addScheduleOptions(
    schedule.command('add').description('register a nightly run of an inbox, or replace the one of the same name'),
    true,
  ).action((_flags: unknown, cmd: Command) => add(context.environment(), cmd.opts<ScheduleAddFlags>()));
  schedule
    .command('list')
    .description('list the schedules: name, cron, next tick, inbox → outbox')
    .action(() => list(context.environment()));
  schedule
    .command('remove')
    .description('remove a schedule')
    .argument('[name]', "the schedule's name (default: from --inbox)")
    .option('--inbox <dir>', 'the inbox of the schedule to remove, when it has the default name')
    .option('--operator <name>', 'who removes it, for the audit of operator actions (default: the OS user)')
    .action((name: string | undefined, _flags: unknown, cmd: Command) => {
      const { inbox, operator } = cmd.opts<ScheduleRemoveFlags>();
      const env = context.environment();
      const target = name ?? (inbox ? defaultScheduleName(inbox) : undefined);
      if (!target) throw new UsageError('schedule remove needs a name or --inbox.');
      return remove(env, context, target, operator);
    });
  return schedule;
}

async function directory(flag: string, path: string): Promise<void> {
  const s = await stat(path).catch(() => undefined);
  if (!s?.isDirectory()) throw new UsageError(`${flag} ${path} is not a folder.`);
}

/** `--type`, checked now (not at 3 a.m.): the gateway's name of the type it names. */
function scheduleKind(flag: string): string {
  const kind = kindNamed(flag);
  if (!kind) throw new UsageError(`--type ${JSON.stringify(flag)} is not a docflow type this version files: ${KIND_NAMES}.`);
  return kind.type;
}

/** Checks what can be checked now (folders, suffix, webhook, profile), not at 3 a.m., then registers. */
async function add(env: Env, opts: ScheduleAddFlags): Promise<void> {
  await directory('--inbox', opts.inbox);
  await directory('--outbox', opts.outbox);
  // Checked now, not at 3 a.m.: a root that is not there would refuse every file row of every tick.
  if (opts.filesRoot !== undefined) await directory('--files-root', opts.filesRoot);
  await checkFoldersApart(opts.inbox, opts.outbox);
  if (opts.readySuffix !== undefined) checkReadySuffix(opts.readySuffix);
  if (opts.notifyUrl && !/^https?:\/\//.test(opts.notifyUrl)) throw new UsageError(`--notify-url ${opts.notifyUrl} is not an http(s) url.`);
  await loadProfile(opts.profile);
  // Read now, not at 3 a.m.: a mapping that does not parse would refuse every file of every tick.
  if (opts.mapping !== undefined) await loadMapping(opts.mapping, (opts.type !== undefined && readingColumns(kindNamed(opts.type))) || []);
  const deadline = opts.deadline === undefined ? undefined : parseTickDeadline(opts.deadline);
  const info = await withDatabase(env, (db) =>
    withRedis(env, async (redis) => {
      // "This content ran" is remembered as long as the ledger remembers its deals (REALTY_LEDGER_DAYS).
      const info = await upsertSchedule(redis, env.keys, {
        inbox: opts.inbox,
        outbox: opts.outbox,
        profile: opts.profile,
        cron: opts.cron,
        tz: opts.tz,
        notifyUrl: opts.notifyUrl,
        name: opts.name,
        readySuffix: opts.readySuffix,
        settleMs: opts.settleMs,
        lang: opts.lang ?? env.config.lang,
        doneMs: env.config.ledgerMs,
        reportCron: opts.reportCron,
        ...(deadline && { deadline }),
        ...(opts.filesRoot !== undefined && { filesRoot: opts.filesRoot }),
        ...(opts.type !== undefined && { type: scheduleKind(opts.type) }),
        reading: {
          format: opts.format,
          encoding: opts.encoding === 'auto' ? undefined : opts.encoding,
          delimiter: opts.delimiter,
          sheet: opts.sheet,
          mapping: opts.mapping,
        },
      });
      await recordAction(db, {
        who: commandOperator(opts.operator),
        action: 'schedule add',
        detail: `${info.name}: "${info.cron}"${info.tz ? ` ${info.tz}` : ''}, ${opts.inbox} → ${opts.outbox}`,
      });
      return info;
    }),
  );
  console.log(
    `schedule ${info.name}: "${info.cron}"${info.tz ? ` ${info.tz}` : ''}, next tick ${info.next}; a running \`realty-batch work\` executes it`,
  );
  if (info.report) console.log(`  morning report: "${info.report.cron}", next ${info.report.next}, to ${opts.outbox}`);
}

async function list(env: Env): Promise<void> {
  const schedules = await withRedis(env, (redis) => listSchedules(redis, env.keys));
  if (schedules.length === 0) console.log('no schedules');
  for (const s of schedules)
    console.log(
      `${s.name}  "${s.cron}"${s.tz ? ` ${s.tz}` : ''}  next ${s.next ?? '?'}  ${s.data?.inbox ?? ''} → ${s.data?.outbox ?? ''}${s.data?.filesRoot ? `  files-root ${s.data.filesRoot}` : ''}${s.report ? `  report "${s.report.cron}" next ${s.report.next ?? '?'}` : ''}`,
    );
}

async function remove(env: Env, context: CliContext, name: string, operator: string | undefined): Promise<void> {
  const removed = await withDatabase(env, (db) =>
    withRedis(env, async (redis) => {
      const removed = await removeSchedule(redis, env.keys, name);
      if (removed) await recordAction(db, { who: commandOperator(operator), action: 'schedule remove', detail: name });
      return removed;
    }),
  );
  console.log(removed ? `schedule ${name} removed` : `there is no schedule ${name}`);
  context.setExitCode(removed ? 0 : 1);
}

/** `realty-batch schedule`: register, list or remove a nightly run from an inbox. */
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { loadProfile } from '../input/profile.js';
import { connectRedis } from '../redis/connection.js';
import { checkFoldersApart, checkReadySuffix, defaultScheduleName, listSchedules, removeSchedule, upsertSchedule } from '../schedule/scheduler.js';
import { environment, nonNegativeInt } from './common.js';

async function directory(flag: string, path: string): Promise<void> {
  const s = await stat(path).catch(() => undefined);
  if (!s?.isDirectory()) throw new UsageError(`${flag} ${path} is not a folder.`);
}

export function registerScheduleCommand(program: Command): void {
  program
    .command('schedule')
    .description('run every new file of an inbox on a cron schedule (any `realty-batch work` executes the ticks); --list, --remove')
    .option('--inbox <dir>', 'where banks drop exports')
    .option('--outbox <dir>', 'where <file>.results.csv, .attention.csv and .summary.json land')
    .option('--profile <bank.json>', 'the bank profile')
    .option('--cron <expr>', 'five fields, or six with seconds first (e.g. "0 30 1 * * *")')
    .option('--tz <zone>', 'time zone of the cron, e.g. Europe/Moscow')
    .option('--notify-url <url>', 'POST each run\'s summary (JSON) to this webhook, with retries')
    .option('--name <name>', 'the schedule\'s name (default: from the inbox path)')
    .option('--ready-suffix <suffix>', 'take <file> only once <file><suffix> exists (e.g. .ready); the marker goes with its file')
    .option('--settle-ms <n>', 'without --ready-suffix: take a file once it stayed unchanged this long (default 60000)', nonNegativeInt('--settle-ms'))
    .option('--list', 'list the schedules')
    .option('--remove', 'remove the schedule named by --name (or by --inbox)')
    .action(async (opts) => {
      const env = environment();
      if (opts.list) {
        const redis = await connectRedis(env.config.redis, { failFast: true });
        try {
          const schedules = await listSchedules(redis, env.keys);
          if (schedules.length === 0) console.log('no schedules');
          for (const s of schedules) console.log(`${s.name}  "${s.cron}"${s.tz ? ` ${s.tz}` : ''}  next ${s.next ?? '?'}  ${s.data?.inbox ?? ''} → ${s.data?.outbox ?? ''}`);
        } finally {
          redis.disconnect();
        }
        return;
      }
      if (opts.remove) {
        const name: string | undefined = opts.name ?? (opts.inbox ? defaultScheduleName(opts.inbox) : undefined);
        if (!name) throw new UsageError('schedule --remove needs --name or --inbox.');
        const redis = await connectRedis(env.config.redis, { failFast: true });
        try {
          const removed = await removeSchedule(redis, env.keys, name);
          console.log(removed ? `schedule ${name} removed` : `there is no schedule ${name}`);
          process.exitCode = removed ? 0 : 1;
        } finally {
          redis.disconnect();
        }
        return;
      }
      for (const flag of ['inbox', 'outbox', 'profile', 'cron'] as const) {
        if (!opts[flag]) throw new UsageError(`schedule needs --${flag} (or --list, or --remove).`);
      }
      await directory('--inbox', opts.inbox);
      await directory('--outbox', opts.outbox);
      await checkFoldersApart(opts.inbox, opts.outbox);
      if (opts.readySuffix !== undefined) checkReadySuffix(opts.readySuffix);
      if (opts.notifyUrl && !/^https?:\/\//.test(opts.notifyUrl)) throw new UsageError(`--notify-url ${opts.notifyUrl} is not an http(s) url.`);
      // A bad profile is found now, not at 3 a.m.
      await loadProfile(opts.profile);
      const redis = await connectRedis(env.config.redis, { failFast: true });
      try {
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
          doneMs: env.config.ledgerMs,
        });
        console.log(`schedule ${info.name}: "${info.cron}"${info.tz ? ` ${info.tz}` : ''}, next tick ${info.next}; a running \`realty-batch work\` executes it`);
      } finally {
        redis.disconnect();
      }
    });
}

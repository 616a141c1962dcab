/** `realty-batch dashboard [--port N] [--host H] [--public-url URL] [--no-auth] [--read-only]`: the operations page. */
import { InvalidArgumentError, type Command } from 'commander';
import { resolveAccess } from '../../dashboard/auth.js';
import { parsePublicUrl } from '../../dashboard/security.js';
import type { Lang } from '../../config.js';
import { type CliContext } from '../environment.js';
import { LANG_HELP, langFlag } from '../flags.js';
import { withDatabase } from '../with-database.js';
import { withRedis } from '../with-redis.js';

export const DEFAULT_DASHBOARD_PORT = 3000;

export interface DashboardFlags {
  port: number;
  host?: string;
  publicUrl?: string;
  /** False with `--no-auth`. */
  auth: boolean;
  readOnly?: boolean;
  lang?: Lang;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('--port must be a whole number from 0 to 65535.');
  return n;
}

export function registerDashboardCommand(program: Command, context: CliContext): Command {
  return program
    .command('dashboard')
    .description('the operations web page: the deals queue (Bull Board), the batches with their results and attention files, and /metrics')
    .option('--port <n>', 'listen port (0 = any free; the url is printed)', port, DEFAULT_DASHBOARD_PORT)
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option(
      '--public-url <url>',
      'where the page is opened when a proxy serves it (https://ops.example.com; or DASHBOARD_PUBLIC_URL): the only origin allowed to change anything',
    )
    .option('--no-auth', 'no credentials (DASHBOARD_USER, DASHBOARD_PASSWORD): listens on 127.0.0.1 only')
    .option('--read-only', 'hide every action: no retry, clean or pause')
    .option('--lang <ru|en>', `the attention files and the results for Excel it hands out: ${LANG_HELP}`, langFlag)
    .action(async (_flags: unknown, cmd: Command) => {
      const opts = cmd.opts<DashboardFlags>();
      const readOnly = opts.readOnly ?? false;
      // The configuration reads .env first, so the credentials may come from there too.
      const env = context.environment();
      // The password goes to the server only, never to a log.
      const access = resolveAccess({
        auth: opts.auth,
        host: opts.host,
        user: env.config.dashboard.user,
        password: env.config.dashboard.password,
      });
      const publicUrl = opts.publicUrl ?? env.config.dashboard.publicUrl;
      const publicOrigin = publicUrl ? parsePublicUrl(publicUrl) : undefined;
      // fastify and Bull Board load only for this command: `load` and `work` need not carry them.
      const { BATCHES_PATH, BOARD_PATH, startDashboard } = await import('../../dashboard/server.js');
      await withDatabase(env, (db) =>
        withRedis(env, async (redis) => {
          const dashboard = await startDashboard({
            redis,
            keys: env.keys,
            db,
            host: access.host,
            port: opts.port,
            credentials: access.credentials,
            readOnly,
            publicOrigin,
            lang: opts.lang ?? env.config.lang,
            logger: env.logger,
          });
          console.log(
            `dashboard listening on ${dashboard.url}${BATCHES_PATH} (queue at ${BOARD_PATH}, metrics at /metrics)${publicOrigin ? `; served as ${publicOrigin}` : ''}${access.credentials ? '' : '; no credentials asked'}${readOnly ? '; read-only' : ''}`,
          );
          env.logger.info({ url: dashboard.url, publicOrigin, auth: access.credentials !== undefined, readOnly }, 'dashboard started');
          await new Promise<void>((resolve) => {
            for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
          });
          await dashboard.close();
          env.logger.info('dashboard stopped');
        }),
      );
    });
}

/**
 * One database for one command: open it, bring its schema up to date, run, always close it,
 * whatever the command did. Every command that uses the system of record goes through here,
 * so none runs on a schema older than its code, and none on a newer one (migrate refuses it).
 */
import { isDatabaseOutage, openDatabase, type Database } from '../db/database.js';
import { bindDeployment, checkDeployment } from '../db/deployment.js';
import { migrate } from '../db/migrate.js';
import { DatabaseError, RealtyBatchError } from '../errors.js';
import { reasonOf } from '../files/atomic-file.js';
import type { Env } from './environment.js';

export interface WithDatabaseOptions {
  /** Applies the pending migrations before the command (the default); `db status` and `db backup` look without changing. */
  migrate?: boolean;
  /** PostgreSQL connections at most (database.ts's default otherwise). */
  poolSize?: number;
}

/**
 * Opens `env.database` (a test's) or the configured database, migrates it unless told not to,
 * and runs `fn` with it and the versions this start applied. A database that cannot be reached
 * or used ends the command in one sentence naming it (without its password).
 */
export async function withDatabase<T>(
  env: Env,
  fn: (db: Database, migrated: readonly number[]) => Promise<T>,
  options: WithDatabaseOptions = {},
): Promise<T> {
  const db = openDatabase(env.database ?? env.config.database, options.poolSize === undefined ? {} : { poolSize: options.poolSize });
  try {
    let migrated: number[] = [];
    if (options.migrate !== false) {
      migrated = await migrate(db).catch((err: unknown) => {
        throw unusable(db, err, true);
      });
      if (migrated.length > 0) env.logger.info({ database: db.where, migrated }, 'database schema migrated');
    }
    return await fn(db, migrated).catch((err: unknown) => {
      throw unusable(db, err, false);
    });
  } finally {
    // Closing is all that is left to do: an error here must not hide the command's own.
    await db.close().catch(() => undefined);
  }
}

/** PostgreSQL's refusals of the connection itself: a wrong password or user (28…), no such database (3D000). */
const REFUSED = /^(28|3D)/;

/**
 * The project's own errors as they are. Anything else while migrating means the database cannot
 * be used; later, only a connection lost or refused is the database's fault rather than the command's.
 */
function unusable(db: Database, err: unknown, migrating: boolean): unknown {
  if (err instanceof RealtyBatchError) return err;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (!migrating && !isDatabaseOutage(err) && !(typeof code === 'string' && REFUSED.test(code))) return err;
  return new DatabaseError(
    `The database ${db.where} cannot be used (${reasonOf(err)}): check DATABASE_URL and that the database answers, then run the command again.`,
    { cause: err },
  );
}

/**
 * Binds the database to the gateway and account this command talks to (src/db/deployment.ts), or
 * refuses in one sentence when it belongs to another: before anything is sent.
 */
export async function bindToGateway(db: Database, env: Env, gateway: { apiUrl: string }): Promise<void> {
  await bindDeployment(db, { prefix: env.config.prefix, gatewayUrl: gateway.apiUrl, account: env.config.credentials?.accountId ?? '' });
}

/**
 * For a command that queues work without talking to the gateway (`load`, `retry`): refuses in
 * one sentence a database that is the ledger of another gateway or account than REALTY_API_URL
 * and REALTY_ACCOUNT_ID say, when they are set. Binds nothing: the first command that talks to
 * the gateway does.
 */
export async function refuseOtherGateway(db: Database, env: Env): Promise<void> {
  if (env.config.apiUrl === undefined) return;
  await checkDeployment(db, { prefix: env.config.prefix, gatewayUrl: env.config.apiUrl, account: env.config.credentials?.accountId ?? '' });
}

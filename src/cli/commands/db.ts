/**
 * `realty-batch db status|migrate|backup <file>`: the database (the system of record, src/db)
 * as an operator sees it. Every other command migrates it at start; these look at it, migrate
 * it on purpose (before a deployment, say), and copy it.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Database } from '../../db/database.js';
import { describeTarget, urlWithoutPassword } from '../../db/location.js';
import { newerSchemaError, schemaStatus, type SchemaStatus } from '../../db/migrate.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../db/migrations/index.js';
import { pruneDatabase, type PruneCounts } from '../../db/prune.js';
import { DAY } from '../../config.js';
import { DatabaseError, UsageError } from '../../errors.js';
import { type CliContext, type Env } from '../environment.js';
import { positiveInt } from '../flags.js';
import { rows } from '../print.js';
import { withDatabase } from '../with-database.js';

export interface DbStatusFlags {
  json?: boolean;
}

export interface DbPruneFlags {
  ledgerDays?: number;
  dryRun?: boolean;
  json?: boolean;
}

/** One connection is all a `db` command needs. */
const ONE = { poolSize: 1 };

export function registerDbCommand(program: Command, context: CliContext): Command {
  const db = program
    .command('db')
    .description('the database (DATABASE_URL, or the SQLite file under XDG_STATE_HOME): its schema, its migrations, a backup');
  db.command('status')
    .description('the engine, where the database is, its schema version and the migrations applied and pending')
    .option('--json', 'print one JSON object')
    .action(async (_flags: unknown, cmd: Command) => {
      const env = context.environment();
      const status = await readStatus(env);
      if (cmd.opts<DbStatusFlags>().json) console.log(JSON.stringify(status));
      else printStatus(status);
      // After the facts are printed: a build this old must not use the database, and says so.
      if (status.current > status.latest) throw newerSchemaError(status.where, status.current);
    });
  db.command('migrate')
    .description('apply the pending migrations now (every command applies them at start)')
    .action(async () => {
      const env = context.environment();
      const [where, migrated] = await withDatabase(env, (db, applied) => Promise.resolve([db.where, applied] as const), ONE);
      console.log(describeMigrated(where, migrated));
    });
  db.command('backup')
    .description('SQLite: a consistent copy of the live database, written whole to <file>; PostgreSQL: use pg_dump')
    .argument('<file>', 'where the copy goes (replaced whole once the copy is complete)')
    .action(async (file: string) => {
      const env = context.environment();
      const target = env.database ?? env.config.database;
      if (target.engine === 'postgres') {
        throw new UsageError(
          `The database is PostgreSQL: back it up with pg_dump, e.g. pg_dump --format=custom --file=${file} '${urlWithoutPassword(target.url)}' (its password from PGPASSWORD or ~/.pgpass).`,
        );
      }
      if (!existsSync(target.path))
        throw new DatabaseError(`The database ${describeTarget(target)} does not exist yet: there is nothing to back up.`);
      await withDatabase(env, (db) => db.backup!(file), { ...ONE, migrate: false });
      console.log(`backed up ${describeTarget(target)} to ${resolve(file)}`);
    });
  db.command('prune')
    .description(
      'delete ledger entries unchanged for --ledger-days (none in flight), their docflows and history, and expired batches with their outcomes; in small transactions',
    )
    .option(
      '--ledger-days <n>',
      'keep entries this many days after their last change (default: REALTY_LEDGER_DAYS, 1830)',
      positiveInt('--ledger-days'),
    )
    .option('--dry-run', 'count what would be deleted, delete nothing')
    .option('--json', 'print the counts as one JSON object')
    .action(async (_flags: unknown, cmd: Command) => {
      const opts = cmd.opts<DbPruneFlags>();
      const env = context.environment();
      const ledgerMs = opts.ledgerDays === undefined ? env.config.ledgerMs : opts.ledgerDays * DAY;
      if (ledgerMs < env.config.retentionMs)
        throw new UsageError(
          `--ledger-days ${opts.ledgerDays} is shorter than REALTY_RETENTION_DAYS (${env.config.retentionMs / DAY}): the ledger must outlive the batches, or a batch loaded again would send its deals twice.`,
        );
      const counts = await withDatabase(env, (db) => pruneDatabase(db, { ledgerMs, dryRun: opts.dryRun === true }));
      if (opts.json) console.log(JSON.stringify({ dryRun: opts.dryRun === true, ledgerDays: ledgerMs / DAY, ...counts }));
      else console.log(describePruned(counts, ledgerMs / DAY, opts.dryRun === true));
    });
  return db;
}

function describePruned(c: PruneCounts, days: number, dryRun: boolean): string {
  const entries = c.ledger === 1 ? '1 ledger entry' : `${c.ledger} ledger entries`;
  const batches = c.batches === 1 ? '1 expired batch' : `${c.batches} expired batches`;
  const what = `${entries} unchanged for ${days} days, ${rows(c.docflows, 'docflow')} with ${rows(c.history, 'state')} of history, ${batches} with ${rows(c.outcomes, 'outcome')}`;
  return dryRun ? `would delete ${what} (--dry-run: nothing deleted)` : `deleted ${what}`;
}

export interface DbStatus extends SchemaStatus {
  engine: Database['engine'];
  where: string;
  /** False for a SQLite file not made yet (the first command that needs it makes it). */
  exists: boolean;
}

/** The schema's status, without making a SQLite file that does not exist yet. */
async function readStatus(env: Env): Promise<DbStatus> {
  const target = env.database ?? env.config.database;
  const where = describeTarget(target);
  if (target.engine === 'sqlite' && !existsSync(target.path)) {
    const pending = MIGRATIONS.map(({ version, name }) => ({ version, name }));
    return { engine: 'sqlite', where, exists: false, current: 0, latest: SCHEMA_VERSION, applied: [], pending };
  }
  const status = await withDatabase(env, (db) => schemaStatus(db), { ...ONE, migrate: false });
  return { engine: target.engine, where, exists: true, ...status };
}

function printStatus(s: DbStatus): void {
  console.log(`database: ${s.engine}, ${s.where}${s.exists ? '' : ' (not made yet: the first command that needs it makes it)'}`);
  const state =
    s.current > s.latest
      ? 'newer than this realty-batch'
      : s.pending.length === 0
        ? 'up to date'
        : `${rows(s.pending.length, 'migration')} pending`;
  console.log(`schema: version ${s.current} of ${s.latest} (${state})`);
  for (const m of s.applied) console.log(`  applied  ${m.version} ${m.name}  ${m.appliedAt}`);
  for (const m of s.pending) console.log(`  pending  ${m.version} ${m.name}`);
}

function describeMigrated(where: string, migrated: readonly number[]): string {
  if (migrated.length === 0) return `${where}: nothing to apply, the schema is at version ${SCHEMA_VERSION}, the latest`;
  const names = migrated.map((v) => `${v} ${MIGRATIONS.find((m) => m.version === v)?.name ?? '?'}`);
  return `${where}: applied ${rows(migrated.length, 'migration')} (${names.join(', ')}); the schema is at version ${SCHEMA_VERSION}`;
}

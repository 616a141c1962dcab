/**
 * Batches and their rows' outcomes move from Redis into the database: what a Redis emptied
 * at any moment must not take with it (issue 38). A batch keeps what `retry --missing` needs to
 * remake its rows' jobs without Redis (the input's path and fingerprint, the reading options,
 * the profile's path and sha256, the bank's INN, the type, `--resubmit`), never the profile's
 * personal data: that stays in Redis, expiring with the batch's work. The nightly inbox's memory
 * of files run and the morning reports written move too.
 */
import type { Migration } from './migration.js';

export const batchesOutcomes: Migration = {
  version: 2,
  name: 'batches-outcomes',
  async up(db) {
    await db.schema
      .createTable('batches')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('file', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('reading', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('resubmit', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('files_root', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('total', 'integer')
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_ms', 'bigint', (c) => c.notNull())
      .addColumn('loaded_at', 'text')
      .addColumn('loading_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('loader', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('retention_ms', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('database_id', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('bank', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('type', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('profile_path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('profile_sha256', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
    await db.schema.createIndex('batches_created').on('batches').column('created_ms').execute();
    await db.schema.createIndex('batches_expires').on('batches').column('expires_at').execute();

    await db.schema
      .createTable('outcomes')
      .addColumn('batch', 'text', (c) => c.notNull())
      .addColumn('row', 'integer', (c) => c.notNull())
      .addColumn('deal_id', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('docflow_id', 'text')
      .addColumn('cn', 'text')
      .addColumn('http_status', 'integer')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('finished_at', 'text', (c) => c.notNull())
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('candidates', 'text')
      .addColumn('request_id', 'text')
      .addColumn('type', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('outcomes_pk', ['batch', 'row'])
      .execute();
    // The dashboard and `status` count a batch's outcomes by kind.
    await db.schema.createIndex('outcomes_batch_outcome').on('outcomes').columns(['batch', 'outcome']).execute();
    await db.schema.createIndex('outcomes_docflow').on('outcomes').column('docflow_id').execute();

    // The nightly inbox's memory: content that ran to the end is never run again (a renamed copy either).
    await db.schema
      .createTable('inbox_files')
      .addColumn('inbox', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('file', 'text', (c) => c.notNull())
      .addColumn('batch', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('inbox_files_pk', ['inbox', 'sha256'])
      .execute();
    await db.schema.createIndex('inbox_files_expires').on('inbox_files').column('expires_at').execute();

    // The morning reports written: which schedule, for which day, where, with what totals.
    await db.schema
      .createTable('reports')
      .addColumn('schedule', 'text', (c) => c.notNull())
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('file', 'text', (c) => c.notNull())
      .addColumn('totals', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('reports_pk', ['schedule', 'day'])
      .execute();
  },
};

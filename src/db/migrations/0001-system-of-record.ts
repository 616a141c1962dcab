/**
 * The first schema: the ledger, the docflows the feed follows and their history, the feed's
 * one row, the deployment's binding and the operator actions. Written once with the query
 * layer's schema builder for both engines; a later change is a new numbered file, never an
 * edit of this one.
 */
import type { Migration } from './migration.js';

export const systemOfRecord: Migration = {
  version: 1,
  name: 'system-of-record',
  async up(db, engine) {
    await db.schema
      .createTable('ledger')
      .addColumn('bank', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('deal_id', 'text', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('batch', 'text', (c) => c.notNull())
      .addColumn('row', 'integer', (c) => c.notNull())
      .addColumn('job', 'text')
      .addColumn('try_at', 'bigint')
      .addColumn('end_at', 'bigint')
      .addColumn('timeout_ms', 'integer')
      .addColumn('lag_ms', 'integer')
      .addColumn('nonce', 'text')
      .addColumn('docflow_id', 'text')
      .addColumn('outcome', 'text')
      .addColumn('at', 'text')
      .addColumn('via', 'text')
      .addColumn('cn', 'text')
      .addColumn('addr', 'text')
      .addColumn('pf', 'text')
      .addColumn('prev', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('ledger_pk', ['bank', 'type', 'deal_id'])
      .execute();
    await db.schema.createIndex('ledger_docflow').on('ledger').column('docflow_id').execute();
    await db.schema.createIndex('ledger_cn').on('ledger').column('cn').execute();
    // The dashboard finds a deal by its id across banks and types.
    await db.schema.createIndex('ledger_deal').on('ledger').column('deal_id').execute();
    await db.schema.createIndex('ledger_updated').on('ledger').column('updated_at').execute();
    await db.schema.createIndex('ledger_batch_row').on('ledger').columns(['batch', 'row']).execute();

    await db.schema
      .createTable('docflows')
      .addColumn('docflow_id', 'text', (c) => c.primaryKey())
      .addColumn('bank', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('deal_id', 'text', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('st', 'text')
      .addColumn('sat', 'text')
      .addColumn('req', 'text')
      .addColumn('req_at', 'text')
      .addColumn('uin', 'text')
      .addColumn('amt', 'text')
      .addColumn('payer', 'text')
      .addColumn('rerr', 'text')
      .addColumn('files', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('docflows_deal').on('docflows').columns(['bank', 'type', 'deal_id']).execute();
    await db.schema.createIndex('docflows_request').on('docflows').column('request_id').execute();
    await db.schema.createIndex('docflows_deal_id').on('docflows').column('deal_id').execute();
    await db.schema.createIndex('docflows_updated').on('docflows').column('updated_at').execute();
    await db.schema.createIndex('docflows_state').on('docflows').column('st').execute();

    await db.schema
      .createTable('docflow_history')
      .addColumn('docflow_id', 'text', (c) => c.notNull())
      .addColumn('st', 'text', (c) => c.notNull())
      .addColumn('sat', 'text', (c) => c.notNull())
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('docflow_history_pk', ['docflow_id', 'sat', 'st'])
      .execute();

    await db.schema
      .createTable('feed')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('cursor', 'text', (c) => c.notNull())
      .addColumn('since', 'bigint', (c) => c.notNull())
      .addColumn('covered_at', 'bigint', (c) => c.notNull())
      .addColumn('page_max', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('items', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('resolved', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('unknown', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('conflicts', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('followed', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();

    await db.schema
      .createTable('deployment')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('database_id', 'text', (c) => c.notNull())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('gateway_url', 'text', (c) => c.notNull())
      .addColumn('account', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('operator_actions')
      .addColumn('id', engine === 'postgres' ? 'bigserial' : 'integer', (c) =>
        engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
      )
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('who', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('batch', 'text')
      .addColumn('deal_id', 'text')
      .addColumn('detail', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('operator_actions_deal').on('operator_actions').column('deal_id').execute();
  },
};

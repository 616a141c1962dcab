/**
 * The fleet's turns at maintenance (src/db/prune.ts: the pruning pass): one row a task, with the
 * time (database clock, ms) before which no other process takes it on. A compare-and-set on it
 * gives one process the turn, on either engine, with nothing held in Redis.
 */
import type { Migration } from './migration.js';

export const maintenance: Migration = {
  version: 3,
  name: 'maintenance',
  async up(db) {
    await db.schema
      .createTable('maintenance')
      .addColumn('task', 'text', (c) => c.primaryKey())
      .addColumn('due_at', 'bigint', (c) => c.notNull())
      .addColumn('holder', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
};

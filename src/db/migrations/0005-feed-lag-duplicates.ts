/**
 * What the feed's follower measures and what it catches (issue 39):
 * - `ledger.answered_at`: when the gateway's answer named the deal's docflow (database clock),
 *   so that the feed's lag is measured on our clock: when the feed first showed the docflow
 *   minus when its answer came. `ledger.judged_at`: when a try of the deal whose answer was lost
 *   was last judged to have made nothing (and so may be sent again): the end of a run waits for
 *   the feed past such deals (src/batch/feed-shown.ts).
 * - the feed's row keeps the lag it observed (a high percentile, the largest, how many docflows
 *   and when), which raises the wait before a try is judged to have made nothing.
 * - `duplicates`: a docflow a deal should not have (two for one requestId, or a try's docflow seen
 *   after the next try was claimed), with the docflow the deal keeps and the row that holds the deal.
 *   Ids only: no personal data.
 */
import type { Migration } from './migration.js';

export const feedLagDuplicates: Migration = {
  version: 5,
  name: 'feed-lag-duplicates',
  async up(db) {
    await db.schema.alterTable('ledger').addColumn('answered_at', 'bigint').execute();
    await db.schema.alterTable('ledger').addColumn('judged_at', 'bigint').execute();
    const columns: Array<[string, 'integer' | 'bigint', number | undefined]> = [
      ['lag_p99_ms', 'integer', 0],
      ['lag_max_ms', 'integer', 0],
      ['lag_samples', 'bigint', 0],
      ['lag_at', 'bigint', undefined],
    ];
    for (const [name, type, fallback] of columns) {
      await db.schema
        .alterTable('feed')
        .addColumn(name, type, (c) => (fallback === undefined ? c : c.notNull().defaultTo(fallback)))
        .execute();
    }
    await db.schema
      .createTable('duplicates')
      .addColumn('docflow_id', 'text', (c) => c.primaryKey())
      .addColumn('bank', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('deal_id', 'text', (c) => c.notNull())
      .addColumn('kept_docflow_id', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('batch', 'text', (c) => c.notNull())
      .addColumn('row', 'integer', (c) => c.notNull())
      .addColumn('how', 'text', (c) => c.notNull())
      .addColumn('seen_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('duplicates_batch_row').on('duplicates').columns(['batch', 'row']).execute();
  },
};

/**
 * The `docflows` table keeps the indexes its queries use, and no more: every docflow the feed
 * first shows is written to the table and to each of its indexes, on the follower's hot path.
 * - `docflows_request` (request_id) went: no query looks a docflow up by its requestId (the
 *   ledger's key does that).
 * - `docflows_deal` (bank, type, deal_id) and `docflows_deal_id` (deal_id) became one,
 *   `docflows_deal_key` (deal_id, bank, type): a deal's docflows (src/ledger/history.ts) and the
 *   dashboard's search by a dealId alone both read it.
 * `docflows_updated` (the pruning pass) and `docflows_state` (the gauge of docflows per state) stay.
 * Nothing is lost: an index holds no data of its own.
 */
import type { Migration } from './migration.js';

export const docflowsIndexes: Migration = {
  version: 6,
  name: 'docflows-indexes',
  async up(db) {
    await db.schema.createIndex('docflows_deal_key').on('docflows').columns(['deal_id', 'bank', 'type']).execute();
    await db.schema.dropIndex('docflows_deal').execute();
    await db.schema.dropIndex('docflows_deal_id').execute();
    await db.schema.dropIndex('docflows_request').execute();
  },
};

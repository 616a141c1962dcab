/**
 * The feed's row learns what the claim and the restore's detection need (src/ledger/restore.ts):
 * the period of the follower that stored the last complete page (its pause plus that read's
 * time: a deal is claimed only while the feed was read complete within two of them), a count of docflows of
 * this deployment's banks that the ledger lacked when the feed showed them (and the first time), and the suspicion
 * that the database was restored from an older copy: when first and last seen, the first
 * evidence in one sentence (ids and counts only), and the docflows the feed gave back since.
 */
import type { Migration } from './migration.js';

export const feedRestore: Migration = {
  version: 4,
  name: 'feed-restore',
  async up(db) {
    // SQLite adds one column per ALTER TABLE; PostgreSQL is fine with that too.
    const columns: Array<[string, 'integer' | 'bigint' | 'text', number | undefined]> = [
      ['poll_ms', 'integer', 1000],
      ['lacking', 'bigint', 0],
      ['lacking_at', 'bigint', undefined],
      ['restore_at', 'bigint', undefined],
      ['restore_seen_at', 'bigint', undefined],
      ['restore_lost', 'bigint', 0],
      ['restore_why', 'text', undefined],
    ];
    for (const [name, type, fallback] of columns) {
      await db.schema
        .alterTable('feed')
        .addColumn(name, type, (c) => (fallback === undefined ? c : c.notNull().defaultTo(fallback)))
        .execute();
    }
  },
};

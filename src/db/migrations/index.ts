/**
 * The schema's history: numbered, additive migrations, one list for both engines. A new one is
 * a new file and one line here; an applied one is never edited.
 */
import type { Migration } from './migration.js';
import { systemOfRecord } from './0001-system-of-record.js';
import { batchesOutcomes } from './0002-batches-outcomes.js';
import { maintenance } from './0003-maintenance.js';
import { feedRestore } from './0004-feed-restore.js';
import { feedLagDuplicates } from './0005-feed-lag-duplicates.js';
import { docflowsIndexes } from './0006-docflows-indexes.js';

export type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [
  systemOfRecord,
  batchesOutcomes,
  maintenance,
  feedRestore,
  feedLagDuplicates,
  docflowsIndexes,
];

/** The schema version this build knows: a database newer than it is refused. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/**
 * The database's tables as the query layer sees them (src/db/migrations make them). One
 * schema for both engines: times the ledger compares are whole milliseconds of the
 * database's clock (`bigint`), dates shown to people are ISO 8601 text, booleans are
 * never stored (SQLite has none). No column holds personal data: ids, states, codes,
 * digests and masked messages only.
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** A bigint column: PostgreSQL's int8 comes back as a number (src/db/database.ts parses it), SQLite's integer too. */
type Millis = ColumnType<number, number, number>;

/**
 * One deal of one bank and one docflow type: its claim, its tries and the docflow it reached.
 * The truth "never twice" rests on (src/ledger/ledger.ts).
 */
export interface LedgerTable {
  /** The bank: its profile's encumbrancer INN. */
  bank: string;
  /** The docflow type, e.g. `encumbrance_request` (DocflowType; its short code names it in requestIds: src/ledger/entry.ts). */
  type: string;
  deal_id: string;
  /** The resubmission number of the current (or last) try. */
  n: number;
  /** idle | sending | submitted (LedgerState). */
  state: string;
  /** The row that holds the claim, or made the docflow ('' and 0: the feed found it with no row). */
  batch: string;
  row: number;
  /** The holder row's BullMQ job key: whether it still runs decides between waiting and taking over. */
  job: string | null;
  /** A try whose answer is not known: when it began and ended (database clock), its timeout and feed lag allowance, the run that claimed. */
  try_at: Millis | null;
  end_at: Millis | null;
  timeout_ms: number | null;
  lag_ms: number | null;
  nonce: string | null;
  docflow_id: string | null;
  /** queued | suspended: the gateway's answer when the docflow was made. */
  outcome: string | null;
  /** When the docflow was known (ISO 8601). */
  at: string | null;
  /** answer | feed | operator. */
  via: string | null;
  /** The property the deal was claimed for: its cadastral number, its canonical address's digest. */
  cn: string | null;
  addr: string | null;
  /** The deal's persons' name filter (src/privacy/name-filter.ts: short hashes, nothing readable). */
  pf: string | null;
  /** The docflow a resubmission would replace (JSON), kept until the new one exists. */
  prev: string | null;
  /** Last change, database clock: what `--ledger-days` prunes by. */
  updated_at: Millis;
  /** (0005) When the gateway's answer named `docflow_id` (database clock): the feed's lag is measured from it. */
  answered_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** (0005) When a try whose answer was lost was last judged to have made nothing (database clock): the deal may be sent again. */
  judged_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Where one docflow of ours stands at the registry, as the news feed last showed it. */
export interface DocflowTable {
  docflow_id: string;
  bank: string;
  type: string;
  deal_id: string;
  n: number;
  request_id: string;
  /** The registry's state and the feed item's date. */
  st: string | null;
  sat: string | null;
  /** Its requirement (signatures, payment), and since when the requirement stands. */
  req: string | null;
  req_at: string | null;
  uin: string | null;
  amt: string | null;
  /** The payer, masked; the registry's error, masked. */
  payer: string | null;
  rerr: string | null;
  /** Result files (JSON). */
  files: string | null;
  updated_at: Millis;
}

/** Every state a docflow was seen in, once each (its natural key). */
export interface DocflowHistoryTable {
  docflow_id: string;
  st: string;
  sat: string;
  /** When the follower saw it, database clock. */
  seen_at: Millis;
}

/**
 * The news feed follower's one row: the cursor it reads after (a page is stored only by a
 * compare-and-set on it: a follower that lost its turn can never move it back), since when it
 * follows, up to when every docflow made is known to the ledger, counters.
 */
export interface FeedTable {
  id: number;
  cursor: string;
  since: Millis;
  covered_at: Millis;
  /** The largest page the feed ever gave (items): a figure only (no page's length proves the feed's end).*/
  page_max: number;
  /** Items stored. */
  items: Millis;
  /** Docflows of ours the ledger did not have yet: a lost answer found. */
  resolved: Millis;
  /** Items not of a deal of ours, or known already. */
  unknown: Millis;
  /** A requestId with two docflows. */
  conflicts: Millis;
  /** Items that moved a docflow of ours. */
  followed: Millis;
  /** (0004) The period of the follower that stored the last complete page (ms): its pause plus that read's time; a claim needs `covered_at` within two. */
  poll_ms: ColumnType<number, number | undefined, number>;
  /** (0004) Items of this deployment's banks naming a deal (or a try) the ledger lacked: entered from the feed. */
  lacking: ColumnType<number, number | undefined, number>;
  lacking_at: Millis | null;
  /** (0004) A restore from an older copy suspected (src/ledger/restore.ts): first and last evidence, database clock. */
  restore_at: Millis | null;
  restore_seen_at: Millis | null;
  /** (0004) Docflows the feed gave back to the ledger since (re-read items it lacked). */
  restore_lost: ColumnType<number, number | undefined, number>;
  /** (0004) The first evidence, one sentence of ids and counts. */
  restore_why: string | null;
  /** (0005) The feed's lag as measured (ms): its 99th percentile over the follower's last samples, and the largest seen. */
  lag_p99_ms: ColumnType<number, number | undefined, number>;
  lag_max_ms: ColumnType<number, number | undefined, number>;
  /** (0005) Docflows measured in all, and when the figures were last written (database clock). */
  lag_samples: ColumnType<number, number | undefined, number>;
  lag_at: Millis | null;
}

/**
 * (0005) A docflow a deal should not have: a second one for one requestId, or a try's docflow
 * the feed showed after the deal's next try was claimed. `kept_docflow_id` is the one the ledger
 * keeps; `batch`/`row` the row that holds the deal (its results line names both).
 */
export interface DuplicateTable {
  docflow_id: string;
  bank: string;
  type: string;
  deal_id: string;
  kept_docflow_id: string;
  request_id: string;
  batch: string;
  row: number;
  /** How it was seen: `feed-request-id`, `feed-older-try` or `answer`. */
  how: string;
  seen_at: Millis;
}

/** The deployment this database belongs to: bound at its first start to a gateway and an account. */
export interface DeploymentTable {
  id: number;
  /** This database's id: every job carries it, and a worker on another database refuses the job. */
  database_id: string;
  prefix: string;
  gateway_url: string;
  account: string;
  created_at: string;
}

/** Who did what, when: retries, resolves, cancels, pauses, schedule changes, dashboard actions. */
export interface OperatorActionTable {
  id: Generated<number>;
  at: string;
  /** The dashboard's login, `--operator`, or the OS user. */
  who: string;
  action: string;
  batch: string | null;
  deal_id: string | null;
  /** What was asked and what came of it, without personal data. */
  detail: string;
}

/**
 * A batch: one input file's rows, loaded under one bank profile (src/batch/batch-store.ts). What
 * `retry --missing` needs to remake its jobs without Redis; the profile itself (personal data)
 * is in Redis only, expiring with the batch's work.
 */
export interface BatchTable {
  id: string;
  /** The input's path, and sha256 of its bytes with the reading options. */
  file: string;
  fingerprint: string;
  /** The reading options (JSON). */
  reading: string;
  /** 1: loaded with --resubmit. */
  resubmit: number;
  files_root: string;
  /** loading | loaded | failed. */
  state: string;
  total: number | null;
  error: string | null;
  created_at: string;
  created_ms: Millis;
  loaded_at: string | null;
  /** A loading batch's loader: its heartbeat's end (this host's clock, ms) and `<host>:<pid>`. */
  loading_until: Millis;
  loader: string;
  retention_ms: Millis;
  /** When the batch and its outcomes go (ms since epoch), once it loaded or failed. */
  expires_at: Millis | null;
  /** The database it was loaded into (src/db/deployment.ts). */
  database_id: string;
  /** The bank's INN, the docflow type, the profile's path and sha256. */
  bank: string;
  type: string;
  profile_path: string;
  profile_sha256: string;
}

/** A row's one outcome in its batch: the results file's columns (messages masked). */
export interface OutcomeTable {
  batch: string;
  row: number;
  deal_id: string;
  outcome: string;
  docflow_id: string | null;
  /** The cadastral number suggest found (or the input gave). */
  cn: string | null;
  http_status: number | null;
  attempts: number;
  finished_at: string;
  error_code: string | null;
  error_message: string | null;
  /** JSON array of cadastral numbers (ambiguous, not_found). */
  candidates: string | null;
  request_id: string | null;
  type: string | null;
  updated_at: Millis;
}

/** The fleet's turns at a maintenance task (src/db/prune.ts): none takes it before `due_at` (database clock, ms). */
export interface MaintenanceTable {
  task: string;
  due_at: Millis;
  /** `<host>:<pid>` of the process that took the last turn. */
  holder: string;
}

/** A file content the nightly inbox ran to the end: the same bytes again (any name) are not run again. */
export interface InboxFileTable {
  /** The inbox's resolved path. */
  inbox: string;
  sha256: string;
  /** Its name when it ran, its batch, when it ended (ISO 8601). */
  file: string;
  batch: string;
  at: string;
  /** Remembered until then (ms since epoch): as long as the ledger's entries. */
  expires_at: Millis;
}

/** A morning report written: one per schedule and day. */
export interface ReportTable {
  schedule: string;
  day: string;
  at: string;
  file: string;
  /** Its totals (JSON). */
  totals: string;
}

/** The migrations applied, one row each (src/db/migrate.ts). */
export interface SchemaMigrationTable {
  version: number;
  name: string;
  applied_at: string;
}

export interface Schema {
  ledger: LedgerTable;
  docflows: DocflowTable;
  docflow_history: DocflowHistoryTable;
  feed: FeedTable;
  deployment: DeploymentTable;
  operator_actions: OperatorActionTable;
  batches: BatchTable;
  outcomes: OutcomeTable;
  inbox_files: InboxFileTable;
  reports: ReportTable;
  maintenance: MaintenanceTable;
  duplicates: DuplicateTable;
  schema_migrations: SchemaMigrationTable;
}

export type LedgerRow = Selectable<LedgerTable>;
export type NewLedgerRow = Insertable<LedgerTable>;
export type LedgerUpdate = Updateable<LedgerTable>;
export type DocflowRow = Selectable<DocflowTable>;
export type BatchRow = Selectable<BatchTable>;
export type OutcomeRow = Selectable<OutcomeTable>;
export type DuplicateRow = Selectable<DuplicateTable>;
export type NewOutcomeRow = Insertable<OutcomeTable>;

/**
 * Every Redis key the project writes: the work, never the record of what was filed (the
 * ledger, the feed's cursor and the docflows' states are in the database, src/db/). One hash
 * tag, `{prefix}`, covers BullMQ's keys and ours, so all of a deployment's keys live in one
 * Redis Cluster slot and the multi-key commands below never cross slots.
 */

export const DEAL_QUEUE = 'deals';

export interface Keys {
  /** REALTY_PREFIX: the deployment's name, inside every key's hash tag. */
  readonly prefix: string;
  /** BullMQ's `prefix` option: its keys become `{realty}:deals:...`. */
  readonly bullPrefix: string;
  readonly queueName: string;
  /** Hash: a batch's profile (personal data, with the batch's expiry); the batch itself is in the database. */
  batch(id: string): string;
  /**
   * Hash: row number → dealId of each row given a job, so pending rows still show their deal in the
   * results; a row's entry goes once its outcome (which names the deal) is written (src/outcomes/store.ts).
   */
  rows(id: string): string;
  /** Hash: row number → the cadastral number suggest found, until the row has its outcome. */
  checkpoints(id: string): string;
  /** Hash: sha256 of an uploaded file → its content id, for the batch's life (its rows' files go up once). */
  contents(id: string): string;
  /** String: the token of the worker uploading these bytes for the batch right now (SET NX, expires). */
  contentClaim(id: string, sha256: string): string;
  /** String: the token of the one process following the feed (src/feed/follower.ts). */
  readonly feedLock: string;
  /**
   * String, expiring: set while a follower started alone (`realty-batch track`) runs; the workers'
   * own followers leave the feed to it (src/feed/follower-lock.ts).
   */
  readonly feedDedicated: string;
  /** Hash: how far this fleet saw its database's feed (`db`: the database's id, `items`): a database behind it was restored (src/ledger/restore.ts). */
  readonly feedWitness: string;
  /** String: why the queue was paused by the project (e.g. `session`), when it was. */
  readonly pauseReason: string;
  /**
   * Hash: the fleet's gateway session when it logs in itself (src/redis/fleet-session.ts):
   * its generation and the session id encrypted (AES-256-GCM), never in clear.
   */
  readonly session: string;
  /** String: the token of the one process logging in for the fleet now (SET NX PX). */
  readonly sessionLock: string;
  /** String: `<second>:<count>` of gateway requests, for `--rate`. */
  readonly rate: string;
  /** Hash: the fleet's counters (src/metrics/recorder.ts), read by the dashboard's /metrics. */
  readonly metrics: string;
  /** Hash: how a schedule's last tick ended (src/redis/schedule-ticks.ts); it expires. */
  scheduleTick(name: string): string;
  /** Sorted set: schedule names by their last tick's end (ms), to list the hashes above without a SCAN. */
  readonly scheduleTicks: string;
}

export function createKeys(prefix: string): Keys {
  const tag = `{${prefix}}`;
  return Object.freeze({
    prefix,
    bullPrefix: tag,
    queueName: DEAL_QUEUE,
    batch: (id: string) => `${tag}:batch:${id}`,
    rows: (id: string) => `${tag}:batch:${id}:rows`,
    checkpoints: (id: string) => `${tag}:batch:${id}:checkpoints`,
    contents: (id: string) => `${tag}:batch:${id}:contents`,
    contentClaim: (id: string, sha256: string) => `${tag}:batch:${id}:content-claim:${sha256}`,
    feedLock: `${tag}:feed:lock`,
    feedDedicated: `${tag}:feed:dedicated`,
    feedWitness: `${tag}:feed:witness`,
    pauseReason: `${tag}:pause-reason`,
    session: `${tag}:session`,
    sessionLock: `${tag}:session:lock`,
    rate: `${tag}:rate`,
    metrics: `${tag}:metrics`,
    scheduleTick: (name: string) => `${tag}:schedule-tick:${name}`,
    scheduleTicks: `${tag}:schedule-ticks`,
  });
}

/** Batch ids appear in keys and file names: keep them to a safe alphabet. */
export const BATCH_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;

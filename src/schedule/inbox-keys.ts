/**
 * The Redis keys of an inbox, and how long each lives. They belong to the inbox
 * (its resolved path), not to the schedule's name: two schedules on one inbox
 * share them. Every one of them expires:
 * - `lock`: LOCK_MS, renewed while its tick runs;
 * - `seen` (name → size, time and when first seen so): SEEN_MS after the tick
 *   that wrote it; losing it only makes a file settle on its modification time;
 * - `loading` (sha256 → loads begun and not ended): SEEN_MS; a file whose loads stopped the
 *   process twice (a crash while reading it) is set aside rather than loaded a third time;
 * What keeps the same content from running twice is in the database (inbox-memory.ts).
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { DAY, DEFAULTS, MINUTE, SECOND } from '../config.js';
import type { Keys } from '../redis/keys.js';

export const LOCK_MS = 60 * SECOND;
export const SEEN_MS = 7 * DAY;
/** How long a content that ran is remembered when the schedule did not say (`realty-batch schedule` passes REALTY_LEDGER_DAYS). */
export const DEFAULT_DONE_MS = DEFAULTS.ledgerDays * DAY;
/** How long a file must stay unchanged before it is taken, without a ready marker (`--settle-ms`). */
export const DEFAULT_SETTLE_MS = MINUTE;
/** Loads of one file that may stop the process before it is set aside (`loading`). */
export const MAX_LOADS_BEGUN = 2;

function inboxBase(keys: Keys, inbox: string): string {
  return `${keys.bullPrefix}:schedule:${createHash('sha256').update(resolve(inbox)).digest('hex').slice(0, 16)}`;
}

export function inboxKey(keys: Keys, inbox: string, what: 'lock' | 'seen' | 'loading'): string {
  return `${inboxBase(keys, inbox)}:${what}`;
}

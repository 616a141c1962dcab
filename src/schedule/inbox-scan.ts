/**
 * Which files of the inbox a tick takes. Two conventions:
 * - a ready marker (`readySuffix`, e.g. `.ready`): `<name>` is taken only once
 *   `<name>.ready` exists beside it; the marker is never an input;
 * - otherwise a settle time (`settleMs`): a file is taken once its size and
 *   modification time stayed the same that long, as seen by ticks, or once it
 *   was last modified that long ago (a file dropped hours before a nightly tick
 *   runs that night).
 * Only regular files are inputs. A symbolic link is never read: it is said once
 * (when it is first seen), and left alone.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Logger } from '../logger.js';
import type { Keys } from '../redis/keys.js';
import { DEFAULT_SETTLE_MS, inboxKey, SEEN_MS } from './inbox-keys.js';
import type { TickData } from './scheduler.js';

/** Names a person or a program leaves while writing, and the tool's own `.realty`: never inputs. */
export const TEMPORARY = /^\.|^~\$|\.(part|tmp|crdownload|partial)$/i;

/** What `seen` records for a link: links are said once, not at every tick. */
const LINK = 'link';

export interface InboxScan {
  /** Complete files, in name order. */
  ready: string[];
  /** Files not complete yet. */
  waiting: string[];
  /** When a waiting file would have settled if it stays as it is (ms since epoch); settle mode only. */
  settlesAt?: number;
}

export async function scanInbox(data: TickData, redis: Redis, keys: Keys, log: Logger): Promise<InboxScan> {
  const seenKey = inboxKey(keys, data.inbox, 'seen');
  const seen = await readSeen(redis, seenKey);
  const entries = await readdir(data.inbox, { withFileTypes: true });
  const lookedAt = Date.now();
  const { record, files } = await lookAt(data, entries, seen, lookedAt, log);
  const multi = redis.multi().del(seenKey);
  if (Object.keys(record).length > 0) multi.hset(seenKey, record).pexpire(seenKey, SEEN_MS);
  await multi.exec();
  return sortOut(data, entries, files, record, lookedAt);
}

interface Seen {
  sig: string;
  at: number;
}

interface Listed {
  name: string;
  sig: string;
  mtimeMs: number;
}

/** name → `<size>:<mtime>|<when it was first seen so>` (or `link|<when>`), as the last tick saw the inbox. */
async function readSeen(redis: Redis, seenKey: string): Promise<Map<string, Seen>> {
  return new Map(
    Object.entries(await redis.hgetall(seenKey)).map(([n, v]) => {
      const at = v.lastIndexOf('|');
      return [n, { sig: v.slice(0, at), at: Number(v.slice(at + 1)) || 0 }];
    }),
  );
}

/** The inbox's regular files with their signatures, and what to remember of every entry. */
async function lookAt(
  data: TickData,
  entries: Dirent[],
  seen: Map<string, Seen>,
  lookedAt: number,
  log: Logger,
): Promise<{ record: Record<string, string>; files: Listed[] }> {
  const suffix = data.readySuffix;
  const record: Record<string, string> = {};
  const files: Listed[] = [];
  for (const e of entries) {
    if (TEMPORARY.test(e.name)) continue;
    if (e.isSymbolicLink()) {
      const was = seen.get(e.name);
      if (was?.sig !== LINK) log.warn({ file: e.name }, 'a symbolic link in the inbox is never read; it is left alone (said once)');
      record[e.name] = `${LINK}|${was?.sig === LINK ? was.at : lookedAt}`;
      continue;
    }
    if (!e.isFile() || (suffix && e.name.endsWith(suffix))) continue;
    // lstat: an entry swapped for a link since readdir is not followed (and is not a file).
    const s = await lstat(join(data.inbox, e.name)).catch(() => undefined);
    if (!s?.isFile()) continue;
    const sig = `${s.size}:${s.mtimeMs}`;
    const was = seen.get(e.name);
    record[e.name] = `${sig}|${was?.sig === sig ? was.at : lookedAt}`;
    files.push({ name: e.name, sig, mtimeMs: s.mtimeMs });
  }
  return { record, files };
}

/** Ready (its marker is there, or it settled) or still waiting, in name order. */
function sortOut(data: TickData, entries: Dirent[], files: Listed[], record: Record<string, string>, lookedAt: number): InboxScan {
  const settleMs = data.settleMs ?? DEFAULT_SETTLE_MS;
  const suffix = data.readySuffix;
  const byName = new Map(entries.map((e) => [e.name, e]));
  files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const ready: string[] = [];
  const waiting: string[] = [];
  let settlesAt: number | undefined;
  for (const f of files) {
    if (suffix) {
      // The marker must be a regular file of the same listing (a link to one is not a marker).
      (byName.get(`${f.name}${suffix}`)?.isFile() ? ready : waiting).push(f.name);
      continue;
    }
    const since = Number(record[f.name]!.split('|')[1]);
    const due = Math.min(since + settleMs, f.mtimeMs + settleMs);
    if (lookedAt >= due) ready.push(f.name);
    else {
      waiting.push(f.name);
      settlesAt = Math.max(settlesAt ?? 0, due);
    }
  }
  return { ready, waiting, ...(settlesAt !== undefined ? { settlesAt } : {}) };
}

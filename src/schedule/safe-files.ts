/**
 * The tick's file operations, none of which follows a symbolic link: an inbox or
 * outbox is written by other people and programs, and a link planted there must
 * never make the tick read or write a file elsewhere.
 *
 * - Inputs are opened with O_NOFOLLOW: a link is refused, never read.
 * - Outputs are written in a private folder of the outbox (made by mkdtemp, so
 *   no one planted anything in it) and renamed into their names. A name that
 *   is a link, or anything but a regular file, is refused; rename itself never
 *   writes through a link, so even one planted a moment after the check is
 *   replaced, not followed.
 * - Inputs move aside into `<inbox>/.realty/processed|failed`, real folders
 *   (checked again before each move), with link(2) then unlink(2): a name
 *   already taken, by a link or a file, is never replaced.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, link, lstat, mkdir, mkdtemp, open, readdir, rename, rm, unlink } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { InputError, OutputError } from '../errors.js';
import type { Logger } from '../logger.js';

/** The tool's own folder in the inbox: a dot-name, which is never an input, so no input can collide with it. */
export const TOOL_DIR = '.realty';
export type Aside = 'processed' | 'failed';
const STAGING = '.realty-staging-';
/** A staging folder left this long by a tick that died is removed (it may hold rejects, with personal data). */
const STAGING_LEFT_MS = 24 * 3600 * 1000;

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;
const lstatOrNone = (path: string) =>
  lstat(path).catch((err: unknown) => {
    if (code(err) === 'ENOENT') return undefined;
    throw err;
  });

/** A folder of the tool's own: created when missing; a link or a file in its place stops the tick. */
async function realFolder(dir: string): Promise<void> {
  let s = await lstatOrNone(dir);
  if (!s) {
    await mkdir(dir).catch((err: unknown) => {
      if (code(err) !== 'EEXIST') throw err;
    });
    s = await lstat(dir);
  }
  if (s.isSymbolicLink())
    throw new OutputError(
      `${dir} is a symbolic link: the tick moves inputs only into a real folder of the inbox; remove the link and the next tick creates the folder.`,
    );
  if (!s.isDirectory())
    throw new OutputError(
      `${dir} is not a folder: the tick keeps its processed and failed inputs there; remove it and the next tick creates the folder.`,
    );
}

export async function ensureToolFolders(inbox: string): Promise<void> {
  await realFolder(join(inbox, TOOL_DIR));
  for (const kind of ['processed', 'failed'] as const) await realFolder(join(inbox, TOOL_DIR, kind));
}

export interface Snapshot {
  sha256: string;
  size: number;
  /** The file's inode and modification time when it was taken: unchanged, its bytes are not read again (watchUnchanged). */
  ino?: number;
  mtimeMs?: number;
}

/** The input's size and sha256, read without following a link (a link is refused). */
export async function snapshot(file: string): Promise<Snapshot> {
  // O_NONBLOCK: a FIFO put in the file's place opens at once (and is refused) instead of hanging the tick.
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: unknown) => {
    if (code(err) === 'ELOOP') throw new InputError(`${basename(file)} is a symbolic link: the tick never reads a link.`, { cause: err });
    throw new InputError(`${basename(file)} cannot be read (${code(err) ?? (err as Error).message}).`, { cause: err });
  });
  try {
    const s = await handle.stat();
    if (!s.isFile()) throw new InputError(`${basename(file)} is not a regular file.`);
    const hash = createHash('sha256');
    await pipeline(handle.createReadStream({ highWaterMark: 1024 * 1024, autoClose: false, start: 0 }), hash);
    return { sha256: hash.digest('hex'), size: s.size, ino: s.ino, mtimeMs: s.mtimeMs };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** True while the input still has the size and content it had when it was taken. */
export async function unchanged(file: string, was: Snapshot): Promise<boolean> {
  const s = await lstatOrNone(file).catch(() => undefined);
  if (!s?.isFile() || s.size !== was.size) return false;
  const now = await snapshot(file).catch(() => undefined);
  return now?.sha256 === was.sha256 && now.size === was.size;
}

/** How often a running batch's input is looked at (ms): its inode, size and time; its bytes only when the time moved. */
export const WATCH_INPUT_MS = 2000;

/**
 * Watches the input of a running batch: `onChange` once it is gone (renamed, deleted), replaced,
 * or its content differs from what was taken. Noticed by content: a file only touched (its time
 * moved, its bytes the same) is the same file, and the watch goes on.
 */
export function watchUnchanged(file: string, was: Snapshot, onChange: () => void, intervalMs = WATCH_INPUT_MS): { stop(): void } {
  let seen = { ino: was.ino, mtimeMs: was.mtimeMs };
  let busy = false;
  let stopped = false;
  const changed = (): void => {
    stopped = true;
    clearInterval(timer);
    onChange();
  };
  const look = async (): Promise<void> => {
    const s = await lstatOrNone(file).catch(() => undefined);
    if (!s?.isFile() || s.size !== was.size) return changed();
    if (s.ino === seen.ino && s.mtimeMs === seen.mtimeMs) return;
    // Touched, or put back under the same name: its bytes say whether it is the file taken.
    const now = await snapshot(file).catch(() => undefined);
    if (now?.sha256 !== was.sha256) return changed();
    seen = { ino: now.ino, mtimeMs: now.mtimeMs };
  };
  const timer = setInterval(() => {
    if (busy || stopped) return;
    busy = true;
    void look()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}

/** Why an output may not be written under this name, if it may not: it must be absent or a regular file. */
export async function outputRefusal(path: string): Promise<string | undefined> {
  const s = await lstatOrNone(path);
  if (!s || s.isFile()) return undefined;
  return `${path} is ${s.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}: the tick never writes through it; remove it, then put the input back in the inbox.`;
}

/** Puts a file written in the staging folder under its name in the outbox, replacing only a regular file. */
export async function publish(staged: string, target: string): Promise<void> {
  const refusal = await outputRefusal(target);
  if (refusal) throw new OutputError(refusal);
  // A replaced file keeps its permissions, as createAtomicFile does.
  const existing = await lstatOrNone(target);
  if (existing) await chmod(staged, existing.mode & 0o7777);
  await rename(staged, target);
}

/** A private folder in the outbox for one batch's outputs, removed afterwards whatever happens. */
export async function withStaging<T>(outbox: string, use: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(outbox, STAGING));
  try {
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Staging folders a dead tick left behind, removed once they are a day old. */
export async function removeOldStaging(outbox: string): Promise<void> {
  const entries = await readdir(outbox, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if (!e.name.startsWith(STAGING) || !e.isDirectory()) continue;
    const s = await lstatOrNone(join(outbox, e.name)).catch(() => undefined);
    if (s?.isDirectory() && Date.now() - s.mtimeMs > STAGING_LEFT_MS)
      await rm(join(outbox, e.name), { recursive: true, force: true }).catch(() => undefined);
  }
}

const stamped = (name: string, attempt: number): string => {
  const ext = extname(name);
  const extra = attempt > 0 ? `-${randomBytes(3).toString('hex')}` : '';
  return `${basename(name, ext)}.${new Date().toISOString().replace(/[:.]/g, '-')}${extra}${ext}`;
};

/** Moves the input into `<inbox>/.realty/<kind>/`, never over a name already taken there (a link included). */
export async function moveAside(inbox: string, name: string, kind: Aside, log: Logger): Promise<string> {
  const dir = join(inbox, TOOL_DIR, kind);
  // Checked again now: a folder swapped for a link since the tick began is refused, not followed.
  await realFolder(join(inbox, TOOL_DIR));
  await realFolder(dir);
  const file = join(inbox, name);
  for (let attempt = 0; ; attempt++) {
    const target = join(dir, attempt === 0 ? name : stamped(name, attempt - 1));
    try {
      await link(file, target);
      await unlink(file);
      return target;
    } catch (err) {
      if (code(err) === 'EEXIST' && attempt < 4) {
        if (attempt === 0 && (await lstatOrNone(target))?.isSymbolicLink()) {
          log.warn({ file: target }, 'a symbolic link stands where the input would move; it is left alone and the input goes beside it');
        }
        continue;
      }
      // A file system without hard links: rename, which replaces a name but never writes through a link.
      if (['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EMLINK', 'ENOSYS'].includes(code(err) ?? '') && !(await lstatOrNone(target))) {
        await rename(file, target);
        return target;
      }
      throw err;
    }
  }
}

/** The ready marker goes with its file (a link or a file of that name is removed, never followed). */
export async function removeMarker(inbox: string, name: string, suffix: string | undefined, log: Logger): Promise<void> {
  if (!suffix) return;
  await rm(join(inbox, `${name}${suffix}`), { force: true }).catch((err: unknown) =>
    log.warn({ file: `${name}${suffix}`, err: { message: (err as Error).message } }, 'the ready marker could not be removed'),
  );
}

/** Makes renames into the outbox durable; a file system that cannot sync a folder is not a failure. */
export async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, 'r').catch(() => undefined);
  await handle?.sync().catch(() => undefined);
  await handle?.close().catch(() => undefined);
}

/**
 * A consistent copy of a live SQLite database (`realty-batch db backup <file>`), taken with
 * SQLite's online backup API while workers go on writing, and put in place whole: the copy is
 * made under a temporary name beside the target, synced, then renamed over it. A crash, a
 * full disk or a failed copy leaves the previous backup as it was. PostgreSQL has pg_dump.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { DatabaseError, UsageError } from '../errors.js';
import { reasonOf } from '../files/atomic-file.js';

/**
 * Pages copied in one step: all of them. SQLite restarts a backup whose source another
 * connection wrote between two steps, so the default of 100 pages a step never ends on a
 * database the fleet keeps writing; one step holds a read transaction for the whole copy,
 * which WAL lets writers work beside, and copies exactly what was committed when it began.
 */
const ALL_PAGES = 0x7fffffff;
/** The files beside a live database that are part of it: replacing one corrupts it. */
const LIVE_SUFFIXES = ['', '-wal', '-shm', '-journal'];

/** Copies the database `raw` (open on `livePath`) to `file`, whole or not at all. */
export async function backupSqlite(raw: BetterSqlite3.Database, livePath: string, file: string): Promise<void> {
  const target = resolve(file);
  await mkdir(dirname(target), { recursive: true }).catch((err: unknown) => {
    throw new DatabaseError(`The backup cannot be written to ${target}: its folder cannot be made (${reasonOf(err)}).`, { cause: err });
  });
  await refuseLiveFile(livePath, target);
  const tmp = join(dirname(target), `.${basename(target).slice(0, 200)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    // Made first, empty, its owner's alone (the ledger's copy, wherever it is put, as the live
    // file's folder is): SQLite keeps the mode of a file it opens. `wx` never follows a planted link.
    await (await open(tmp, 'wx', 0o600)).close();
    await raw.backup(tmp, { progress: () => ALL_PAGES });
    // On disk before it takes the target's name: a power cut never leaves a short copy there.
    await syncFile(tmp);
    await rename(tmp, target);
  } catch (err) {
    await Promise.all([rm(tmp, { force: true }), rm(`${tmp}-journal`, { force: true })]).catch(() => undefined);
    throw new DatabaseError(`The backup to ${target} failed (${reasonOf(err)}); the previous file there, if any, is unchanged.`, {
      cause: err,
    });
  }
  // Makes the rename durable; some file systems cannot sync a folder, which is no failure of the copy.
  await syncFile(dirname(target)).catch(() => undefined);
}

/** The live database, its WAL or its shared memory as the target: the rename would put a copy in place of the database itself. */
async function refuseLiveFile(livePath: string, target: string): Promise<void> {
  const live = await realpath(livePath).catch(() => resolve(livePath));
  const where = join(await realpath(dirname(target)), basename(target));
  const resolved = existsSync(where) ? await realpath(where) : where;
  if (LIVE_SUFFIXES.some((suffix) => resolved === `${live}${suffix}` || where === `${live}${suffix}`)) {
    throw new UsageError(`${target} is the live database ${live} (or one of its files): give the backup another file.`);
  }
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

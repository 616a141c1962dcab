/**
 * Output files written whole or not at all. The content goes to a temporary
 * file beside the target (`.<name>.<random>.tmp`, same folder so the rename
 * stays on one file system); commit syncs it, renames it over the target and
 * syncs the folder. Any failure before that removes the temporary file and
 * leaves the previous target as it was: a crash, a full disk or a failing
 * producer never leaves a short results file where a good one stood.
 *
 * A target that is a character device or a pipe (`/dev/stdout`, `/dev/null`, a
 * FIFO) has no previous content to keep and cannot be replaced: it is written
 * in place, as a stream.
 */
import { randomBytes } from 'node:crypto';
import { close, createWriteStream, fchmod, fsync, open as openFd, unlinkSync } from 'node:fs';
import { mkdir, open, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Duplex, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { OutputError } from '../errors.js';
import { writeChunk } from './write-chunk.js';

export interface AtomicFileOptions {
  /**
   * Streams the content passes through, in order, before the file (a CSV
   * stringifier, an encoder). `write` writes into the first one.
   */
  through?: readonly Duplex[];
  /** Aborting it ends the writing: the temporary file goes, the target stays. */
  signal?: AbortSignal;
  /**
   * The permissions of a file created where there was none (PRIVATE_FILE_MODE for a file that
   * holds personal data); a replaced file keeps its own. 0o666 less the umask when not given.
   */
  mode?: number;
}

/** A file that holds personal data (results, attention, rejects, manifests, downloaded documents): its owner's alone, as the logs are. */
export const PRIVATE_FILE_MODE = 0o600;

export interface AtomicFile {
  /** The target, as given. */
  readonly path: string;
  /** Where the content goes: the first of `through`, or the temporary file itself. */
  readonly stream: Writable;
  /** Writes one chunk, waiting while the file is behind; rejects with an OutputError as soon as the file fails. */
  write(chunk: unknown): Promise<void>;
  /** Ends the content and puts the file in place of the target. */
  commit(): Promise<void>;
  /** Drops what was written; the target stays as it was. Safe to call after a failed or finished commit. */
  abort(): Promise<void>;
}

/** Errors of fsync on a directory handle that only say the file system does not do it. */
const DIRECTORY_SYNC_UNSUPPORTED = new Set(['EINVAL', 'EISDIR', 'EPERM', 'ENOTSUP', 'EBADF']);
/** Names longer than this are cut in the temporary name, which must stay under NAME_MAX (255). */
const MAX_STEM = 200;

export async function createAtomicFile(path: string, options: AtomicFileOptions = {}): Promise<AtomicFile> {
  const { signal } = options;
  signal?.throwIfAborted();
  const dir = dirname(path);
  await mkdir(dir, { recursive: true }).catch((err: unknown) => {
    throw outputError(path, err, true);
  });
  const existing = await stat(path).catch(() => undefined);
  if (existing && (existing.isCharacterDevice() || existing.isFIFO())) return streamInPlace(path, options);

  const { tmp, fd } = await createTemporary(path, options.mode);
  live.add(tmp);
  // A plain descriptor, not a FileHandle: a FileHandle's close waits for its stream to close, which with
  // autoClose off it never does; the descriptor is synced and closed here, before the rename.
  const file = createWriteStream('', { fd, autoClose: false });
  const through = options.through ?? [];
  const head: Writable = through[0] ?? file;
  // Settles when the last byte reached the file, or with the first error of any stream in the chain.
  const done = through.length > 0 ? pipeline([...through, file]) : finished(file);
  done.catch(() => undefined);

  let failure: Error | undefined;
  let state: 'open' | 'committing' | 'committed' | 'aborted' = 'open';
  let fdClosed = false;

  const fail = async (err: unknown): Promise<Error> => {
    // The error a write sees may be the echo of a later stream's: the chain's own is the cause.
    const cause = await done.then(
      () => err,
      (e: unknown) => e,
    );
    failure ??= signal?.aborted ? (signal.reason as Error) : outputError(path, cause, true);
    return failure;
  };

  const onAbort = (): void => {
    for (const s of [...through, file]) s.destroy(signal!.reason as Error);
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  const abort = async (): Promise<void> => {
    if (state === 'committed' || state === 'aborted') return;
    state = 'aborted';
    signal?.removeEventListener('abort', onAbort);
    for (const s of [...through, file]) s.destroy();
    await done.catch(() => undefined);
    // After `done` settled: no write of the stream is still under way on the descriptor.
    if (!fdClosed) await closeFd(fd).catch(() => undefined);
    fdClosed = true;
    await rm(tmp, { force: true }).catch(() => undefined);
    live.delete(tmp);
  };

  return {
    path,
    stream: head,
    async write(chunk) {
      if (failure) throw failure;
      if (state !== 'open') throw await fail(new Error('the file was already committed or dropped'));
      try {
        await writeChunk(head, chunk);
      } catch (err) {
        throw await fail(err);
      }
    },
    async commit() {
      if (state === 'committed') return;
      if (failure || state !== 'open') {
        await abort();
        throw failure ?? (await fail(new Error('the file was already dropped')));
      }
      state = 'committing';
      try {
        head.end();
        await done;
        signal?.throwIfAborted();
        // A replaced file keeps its permissions, as it did when it was written in place.
        if (existing?.isFile()) await fchmodFd(fd, existing.mode & 0o7777);
        // On disk before it takes the target's name: a power cut never leaves an empty file there.
        await fsyncFd(fd);
        fdClosed = true;
        await closeFd(fd);
        await rename(tmp, path);
      } catch (err) {
        const error = await fail(err);
        await abort();
        throw error;
      }
      state = 'committed';
      live.delete(tmp);
      signal?.removeEventListener('abort', onAbort);
      await syncDirectory(dir, path);
    },
    abort,
  };
}

/** Writes `data` whole to `path`, or throws an OutputError and leaves `path` as it was. */
export async function writeFileAtomically(
  path: string,
  data: string | Buffer,
  options: Pick<AtomicFileOptions, 'signal' | 'mode'> = {},
): Promise<void> {
  const file = await createAtomicFile(path, options);
  try {
    await file.write(data);
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
}

/** `wx`: never follows nor reuses whatever already has the name (a planted symlink, a left-over file). */
async function createTemporary(path: string, mode = 0o666): Promise<{ tmp: string; fd: number }> {
  for (let attempt = 1; ; attempt++) {
    const tmp = join(dirname(path), `.${basename(path).slice(0, MAX_STEM)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      return { tmp, fd: await openFdAsync(tmp, 'wx', mode) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 3) continue;
      throw outputError(path, err, true);
    }
  }
}

/** Makes the rename itself durable. Some file systems cannot sync a folder: that is not a failure. */
async function syncDirectory(dir: string, path: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (err) {
    if (!DIRECTORY_SYNC_UNSUPPORTED.has((err as NodeJS.ErrnoException).code ?? '')) {
      throw new OutputError(
        `${path} was written, but its folder could not be synced to disk (${reasonOf(err)}); a power cut now could still lose it.`,
        { cause: err },
      );
    }
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** A device or a pipe: nothing to replace, nothing to keep; the stream goes straight to it. */
function streamInPlace(path: string, options: AtomicFileOptions): AtomicFile {
  const file = createWriteStream(path);
  const through = options.through ?? [];
  const head: Writable = through[0] ?? file;
  const done = through.length > 0 ? pipeline([...through, file]) : finished(file);
  done.catch(() => undefined);
  let failure: Error | undefined;
  const fail = async (err: unknown): Promise<Error> =>
    (failure ??= options.signal?.aborted
      ? (options.signal.reason as Error)
      : outputError(
          path,
          await done.then(
            () => err,
            (e: unknown) => e,
          ),
          false,
        ));
  const onAbort = (): void => {
    for (const s of [...through, file]) s.destroy(options.signal!.reason as Error);
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return {
    path,
    stream: head,
    async write(chunk) {
      if (failure) throw failure;
      await writeChunk(head, chunk).catch(async (err: unknown) => {
        throw await fail(err);
      });
    },
    async commit() {
      if (failure) {
        for (const s of [...through, file]) s.destroy();
        throw failure;
      }
      head.end();
      await done.catch(async (err: unknown) => {
        throw await fail(err);
      });
      options.signal?.removeEventListener('abort', onAbort);
    },
    async abort() {
      options.signal?.removeEventListener('abort', onAbort);
      for (const s of [...through, file]) s.destroy();
      await done.catch(() => undefined);
    },
  };
}

/** One sentence naming the file and the reason; never a stack. */
function outputError(path: string, err: unknown, replacing: boolean): OutputError {
  return new OutputError(`Could not write ${path} (${reasonOf(err)})${replacing ? '; the previous file, if any, is unchanged' : ''}.`, {
    cause: err,
  });
}

/** The errno's own text ("no space left on device"), else the error's message without its final period. */
export function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  // libuv's messages read `ENOSPC: no space left on device, write` (then the path, for some calls).
  if (e?.code && message.startsWith(`${e.code}: `)) {
    const text = message.slice(e.code.length + 2);
    const cut = e.syscall ? text.indexOf(`, ${e.syscall}`) : -1;
    return cut > 0 ? text.slice(0, cut) : text.split(', ')[0]!;
  }
  return message.split('\n')[0]!.replace(/\.$/, '') || e?.code || 'unknown error';
}

const openFdAsync = promisify(openFd);
const fsyncFd = promisify(fsync);
const fchmodFd = promisify(fchmod);
const closeFd = promisify(close);

/** Temporary files not yet committed or removed: an exit part-way (an uncaught error) removes them. */
const live = new Set<string>();
process.once('exit', () => {
  for (const tmp of live) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already gone, or the folder went with it.
    }
  }
});

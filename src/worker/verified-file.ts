/**
 * A row's file read again to be uploaded, and checked before its first byte leaves: opened
 * without following a link and without blocking, refused unless it is a regular file, its
 * inode and size compared with what the load saw, and its change time too when the load kept
 * one (a settled ctime: CHANGE_TIME_SETTLED_MS). The same change time says no write reached the
 * file since the load hashed it: every write moves it, and no tool sets it back. Otherwise (it
 * moved, or the load kept none) its whole content is hashed through that descriptor first and
 * compared with the load's sha256. Only then is a stream given, of that same descriptor: a file
 * swapped after the check (a link to a file outside the folder, a FIFO) is never the one read,
 * and nothing of a file that is not the load's goes out.
 *
 * The stream hashes again as it reads: a file changed in place between the check and the send
 * fails the stream before its last read (at most READ_BYTES) leaves, so the gateway, which
 * waits for Content-Length bytes, never gets a complete content of it, and the row says that
 * part of it was sent. Every read has a deadline (FILE_READ_TIMEOUT_MS).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { DocumentChangedError } from '../errors.js';
import { FileRefusedError, openRegularFile, type RegularFile } from '../files/regular-file.js';

/** Errors that say the file the load checked is no longer there to read (not a passing fault of the disk). */
const GONE: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM']);

/**
 * Bytes read (and sent) at a time. The file's sha256 is CPU a bare upload does not spend; reads
 * of 512 KiB instead of fs.createReadStream's 64 KiB make up most of it: a 2 MB file is 5 reads
 * (4 hash updates, 4 socket writes) instead of 33 (32, 32), and fewer buffers to fault in and
 * collect. Smaller reads cost more CPU per file; larger ones save none. An upload holds at most
 * three reads (the held one, one waiting in the stream, one the socket is taking): 1.5 MiB, where
 * 64 KiB reads held about a quarter of that.
 */
export const READ_BYTES = 512 * 1024;

export interface ExpectedFile {
  path: string;
  size: number;
  sha256: string;
  /** The load's inode of it: another file put at its name since is not this one. */
  inode: number;
  /** The load's settled change time (DocumentFile.changedAtMs): the same at the open, the content is not hashed twice. */
  changedAtMs?: number;
}

export interface VerifiedFile {
  /**
   * Opens and checks the file, then gives a new stream of it (a stream cannot be sent twice: a
   * retry opens the file again). Rejects with DocumentChangedError, before anything is sent,
   * when it is not the load's file; with FileRefusedError `timeout` when the disk does not answer.
   */
  open(): Promise<Readable>;
  /** Set once the file was found changed: why, for the row's outcome. */
  changed: DocumentChangedError | undefined;
}

type How = ConstructorParameters<typeof DocumentChangedError>[2];
type Fail = (how: How, sent?: boolean) => DocumentChangedError;

/** `field` and `file` name the file in the error (`agreementFile`, or the 1-based signature file). */
export function verifiedFile(expected: ExpectedFile, field: string, file?: number): VerifiedFile {
  const fail: Fail = (how, sent = false) => (verified.changed = new DocumentChangedError(field, file, how, sent));
  const verified: VerifiedFile = {
    changed: undefined,
    open: async () => {
      const opened = await openChecked(expected, fail, field);
      return new VerifiedStream(opened, expected, fail);
    },
  };
  return verified;
}

/** The file opened and found to be the load's, whole; its descriptor is the caller's to close (the stream's). */
async function openChecked(expected: ExpectedFile, fail: Fail, field: string): Promise<RegularFile> {
  let file: RegularFile;
  try {
    file = await openRegularFile(expected.path, { name: field });
  } catch (err) {
    if (err instanceof FileRefusedError) {
      if (err.reason === 'link') throw fail('replaced');
      if (err.reason === 'not-regular') throw fail('not-regular');
      throw err;
    }
    // Deleted, replaced by a folder, or no longer ours to read: no later try can send what the
    // load checked. Any other error of the disk (EIO, EMFILE) is tried again as it was.
    throw GONE.has((err as NodeJS.ErrnoException).code ?? '') ? fail('gone') : err;
  }
  try {
    const { ino, size, ctimeMs } = file.stats;
    if (ino !== expected.inode) throw fail('replaced');
    if (size !== expected.size) throw fail('size');
    // Untouched since the load hashed it: the stream's own hash is the one pass (issue 43).
    if (expected.changedAtMs !== undefined && ctimeMs === expected.changedAtMs) return file;
    const hash = createHash('sha256');
    const read = await file
      .readAll((chunk) => hash.update(chunk), expected.size)
      .catch((err: unknown) => {
        throw err instanceof FileRefusedError && err.reason === 'too-large' ? fail('size') : err;
      });
    if (read !== expected.size) throw fail('size');
    if (hash.digest('hex') !== expected.sha256) throw fail('content');
    return file;
  } catch (err) {
    await file.close();
    throw err;
  }
}

/**
 * The checked descriptor's reads, one at a time, straight into the buffers that are sent: no
 * fs stream under this one, and no async iterator or generator between them, which would make
 * promises for every chunk: CPU spent on every file beside the reads.
 */
class VerifiedStream extends Readable {
  readonly #file: RegularFile;
  readonly #expected: ExpectedFile;
  readonly #fail: Fail;
  readonly #hash = createHash('sha256');
  /** Bytes read so far: also where the next read starts. */
  #bytes = 0;
  /** Bytes given to the stream's reader: some have left once this is above 0. */
  #given = 0;
  /** The last read, not given until the next one (or the whole file's check) says it may be. */
  #held: Buffer | undefined;

  constructor(file: RegularFile, expected: ExpectedFile, fail: Fail) {
    super();
    this.#file = file;
    this.#expected = expected;
    this.#fail = fail;
  }

  override _read(): void {
    // One byte more than the load's size allows: a file that grew says so at once, before
    // more than the load's size can be sent.
    const want = Math.min(READ_BYTES, this.#expected.size - this.#bytes + 1);
    // A buffer of its own each read: the socket may still hold the one before.
    const buffer = Buffer.allocUnsafeSlow(want);
    this.#file.read(buffer, this.#bytes, want).then(
      (got) => {
        if (this.destroyed) return;
        if (got === 0) return this.#ended();
        this.#bytes += got;
        if (this.#bytes > this.#expected.size) return void this.destroy(this.#fail('size', this.#given > 0));
        const chunk = got === want ? buffer : buffer.subarray(0, got);
        this.#hash.update(chunk);
        const ready = this.#held;
        this.#held = chunk;
        // The first read only fills the hold: read on until there is a chunk to give.
        if (!ready) return this._read();
        this.#given += ready.length;
        this.push(ready);
      },
      (err: unknown) => {
        if (!this.destroyed) this.destroy(err as Error);
      },
    );
  }

  #ended(): void {
    if (this.#bytes !== this.#expected.size) return void this.destroy(this.#fail('size', this.#given > 0));
    if (this.#hash.digest('hex') !== this.#expected.sha256) return void this.destroy(this.#fail('content', this.#given > 0));
    const last = this.#held;
    this.#held = undefined;
    if (last) this.push(last);
    this.push(null);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.#held = undefined;
    // A read under way closes the descriptor when it ends (its number could be reused by then).
    void this.#file.close().then(() => callback(err));
  }
}

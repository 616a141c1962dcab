/**
 * A row's file read again to be uploaded, checked against what the load saw (its size and
 * sha256) while it streams: the bytes go to the gateway as they are read, but the last read
 * (at most READ_BYTES) is held back until the whole file is known to be the same. A file
 * that changed fails the stream before its last bytes leave, so the gateway, which waits for
 * Content-Length bytes, never gets a complete content of it.
 */
import { createHash } from 'node:crypto';
import { close, open, read } from 'node:fs';
import { Readable } from 'node:stream';
import { DocumentChangedError } from '../errors.js';

/** Errors that say the file the load checked is no longer there to read (not a passing fault of the disk). */
const GONE: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'ELOOP']);

/**
 * Bytes read (and sent) at a time. The file's sha256 is CPU the bare upload does not spend
 * (about 0.9 ms per 2 MB here); reads of 512 KiB instead of fs.createReadStream's 64 KiB make
 * up most of it: a 2 MB file is 5 reads (4 hash updates, 4 socket writes) instead of 33 (32, 32),
 * and fewer buffers to fault in and collect. Measured with bench/upload.ts (100 files of 2 MB,
 * 10 at a time, paired runs): the sending process's CPU went from 470-530 ms to 350-420 (the
 * bare upload's 310-370); 128 KiB cost about 25 ms more, 256 KiB and 1 MiB were within the
 * noise of 512. An upload holds at most three reads (the held one, one waiting in the stream,
 * one the socket is taking): 1.5 MiB, where 64 KiB reads held about a quarter of that.
 */
export const READ_BYTES = 512 * 1024;

export interface ExpectedFile {
  path: string;
  size: number;
  sha256: string;
}

export interface VerifiedFile {
  /** A new stream of the file each call (a stream cannot be sent twice: a retry opens the file again). */
  open(): Readable;
  /** Set once a stream found the file changed: why, for the row's outcome. */
  changed: DocumentChangedError | undefined;
}

type Fail = (how: 'size' | 'content' | 'gone') => DocumentChangedError;

/** `field` and `file` name the file in the error (`agreementFile`, or the 1-based signature file). */
export function verifiedFile(expected: ExpectedFile, field: 'agreementFile' | 'agreementSignatureFiles', file?: number): VerifiedFile {
  const verified: VerifiedFile = {
    changed: undefined,
    open: () => new VerifiedStream(expected, fail),
  };
  const fail: Fail = (how) => (verified.changed = new DocumentChangedError(field, file, how));
  return verified;
}

/**
 * The file's own reads, one at a time, straight into the buffers that are sent: no fs stream
 * under this one, no async iterator or generator between them (those layers cost about 35 ms
 * of CPU per 100 files of 2 MB beside the reads: promises for every chunk).
 */
class VerifiedStream extends Readable {
  readonly #expected: ExpectedFile;
  readonly #fail: Fail;
  readonly #hash = createHash('sha256');
  #fd: number | undefined;
  /** Bytes read so far: also where the next read starts. */
  #bytes = 0;
  /** The last read, not sent until the next one (or the whole file's check) says it may be. */
  #held: Buffer | undefined;
  /** A read is under way: the file is closed once it ends (its descriptor could be reused by then). */
  #reading = false;
  #closeAfterRead: (() => void) | undefined;

  constructor(expected: ExpectedFile, fail: Fail) {
    super();
    this.#expected = expected;
    this.#fail = fail;
  }

  /** Deleted, replaced by a folder, or no longer ours to read: no later try can send what the
   * load checked. Any other error of the disk (EIO, EMFILE) is tried again as it was. */
  #diskError(err: NodeJS.ErrnoException): Error {
    return GONE.has(err.code ?? '') ? this.#fail('gone') : err;
  }

  override _construct(callback: (err?: Error | null) => void): void {
    open(this.#expected.path, 'r', (err, fd) => {
      if (err) return callback(this.#diskError(err));
      this.#fd = fd;
      callback();
    });
  }

  override _read(): void {
    // One byte more than the load's size allows: a file that grew says so at once, before
    // more than the load's size can be sent.
    const want = Math.min(READ_BYTES, this.#expected.size - this.#bytes + 1);
    // A buffer of its own each read: the socket may still hold the one before.
    const buffer = Buffer.allocUnsafeSlow(want);
    this.#reading = true;
    read(this.#fd!, buffer, 0, want, this.#bytes, (err, got) => {
      this.#reading = false;
      if (this.#closeAfterRead) return this.#closeAfterRead();
      if (err) return void this.destroy(this.#diskError(err));
      if (got === 0) return this.#ended();
      this.#bytes += got;
      if (this.#bytes > this.#expected.size) return void this.destroy(this.#fail('size'));
      const chunk = got === want ? buffer : buffer.subarray(0, got);
      this.#hash.update(chunk);
      const ready = this.#held;
      this.#held = chunk;
      // The first read only fills the hold: read on until there is a chunk to give.
      if (ready) this.push(ready);
      else this._read();
    });
  }

  #ended(): void {
    if (this.#bytes !== this.#expected.size) return void this.destroy(this.#fail('size'));
    if (this.#hash.digest('hex') !== this.#expected.sha256) return void this.destroy(this.#fail('content'));
    const last = this.#held;
    this.#held = undefined;
    if (last) this.push(last);
    this.push(null);
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    this.#held = undefined;
    const fd = this.#fd;
    this.#fd = undefined;
    const done = (): void => (fd === undefined ? callback(err) : close(fd, () => callback(err)));
    if (this.#reading) this.#closeAfterRead = done;
    else done();
  }
}

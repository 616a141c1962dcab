/**
 * A row's file read again to be uploaded, checked against what the load saw (its size and
 * sha256) while it streams: the bytes go to the gateway as they are read, but the last chunk
 * (at most 64 KiB, fs's read size) is held back until the whole file is known to be the same.
 * A file that changed fails the stream before its last bytes leave, so the gateway, which
 * waits for Content-Length bytes, never gets a complete content of it.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { DocumentChangedError } from '../errors.js';

/** Errors that say the file the load checked is no longer there to read (not a passing fault of the disk). */
const GONE: ReadonlySet<string> = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'EACCES', 'EPERM', 'ELOOP']);

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

/** `field` and `file` name the file in the error (`agreementFile`, or the 1-based signature file). */
export function verifiedFile(expected: ExpectedFile, field: 'agreementFile' | 'agreementSignatureFiles', file?: number): VerifiedFile {
  const verified: VerifiedFile = {
    changed: undefined,
    open: () => Readable.from(read(), { objectMode: false }),
  };
  const fail = (how: 'size' | 'content' | 'gone'): DocumentChangedError => (verified.changed = new DocumentChangedError(field, file, how));

  async function* read(): AsyncGenerator<Buffer> {
    const hash = createHash('sha256');
    let bytes = 0;
    let held: Buffer | undefined;
    try {
      for await (const chunk of createReadStream(expected.path) as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        // Grown: said at once, before more than the load's size can be sent.
        if (bytes > expected.size) throw fail('size');
        hash.update(chunk);
        if (held) yield held;
        held = chunk;
      }
    } catch (err) {
      // Deleted, replaced by a folder, or no longer ours to read: no later try can send what the
      // load checked. Any other error of the disk (EIO, EMFILE) is tried again as it was.
      throw GONE.has((err as { code?: string }).code ?? '') ? fail('gone') : err;
    }
    if (bytes !== expected.size) throw fail('size');
    if (hash.digest('hex') !== expected.sha256) throw fail('content');
    if (held) yield held;
  }
  return verified;
}

/** The bytes of an input: its sha256, and whether it is a regular file at all. */
import { createHash } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import { InputError } from '../errors.js';

export interface FileState {
  size: number;
  mtimeMs: number;
}

/** Size and modification time of a regular file; anything else (a pipe, a folder) is refused. */
export async function fileState(file: string): Promise<FileState> {
  const s = await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new InputError(`${file} cannot be read (${err.code ?? err.message}).`, { cause: err });
  });
  // A FIFO would be consumed by the hash and then hang the reader.
  if (!s.isFile()) throw new InputError(`${file} is not a regular file: give the path of the export itself.`);
  return { size: s.size, mtimeMs: s.mtimeMs };
}

/** Bytes read at a time by `fileSha256`, into one buffer. */
const HASH_READ_BYTES = 1024 * 1024;

/**
 * The file's SHA-256, read through one buffer: a read stream makes a new 1 MiB buffer per
 * read, freed only when the GC finds it, so hashing a large file would hold tens of MB before
 * the load has read a row.
 */
export async function fileSha256(file: string): Promise<string> {
  await fileState(file);
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(HASH_READ_BYTES);
  try {
    const handle = await open(file, 'r');
    try {
      for (;;) {
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        hash.update(buffer.subarray(0, bytesRead));
      }
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw new InputError(`${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`, { cause: err });
  }
  return hash.digest('hex');
}

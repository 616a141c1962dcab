/** The bytes of an input: its sha256, and whether it is a regular file at all. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
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

export async function fileSha256(file: string): Promise<string> {
  await fileState(file);
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), hash);
  } catch (err) {
    throw new InputError(`${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`, { cause: err });
  }
  return hash.digest('hex');
}

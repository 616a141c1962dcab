/** What makes a batch belong to one input: the file's bytes, and how they are read. */
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

/**
 * The file's sha256 combined with the reading options asked for: the same bytes
 * read with another mapping or encoding are other rows, so another batch.
 */
export async function inputFingerprint(file: string, reading: { format?: string; encoding?: string; delimiter?: string; mapping?: unknown }): Promise<string> {
  const sha = await fileSha256(file);
  const mapping = reading.mapping as { columns?: ReadonlyMap<string, string>; defaults?: object } | undefined;
  const options = JSON.stringify({
    format: reading.format ?? null,
    encoding: reading.encoding ?? null,
    delimiter: reading.delimiter ?? null,
    mapping: mapping ? { columns: [...(mapping.columns ?? new Map()).entries()].sort(), defaults: mapping.defaults ?? {} } : null,
  });
  // Without options the fingerprint is the file's own sha256.
  return options === JSON.stringify({ format: null, encoding: null, delimiter: null, mapping: null }) ? sha : createHash('sha256').update(`${sha}\n${options}`).digest('hex');
}

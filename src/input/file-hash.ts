/** The sha256 of a file's bytes: what makes a batch belong to one input. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { InputError } from '../errors.js';

export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), hash);
  } catch (err) {
    throw new InputError(`${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`, { cause: err });
  }
  return hash.digest('hex');
}

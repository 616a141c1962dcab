/**
 * What the commands that put a docflow's files in a folder share (`documents`, `to-sign`,
 * `sign`): a name that stays inside its folder, the extension from the Content-Type, a
 * file streamed whole to its place (a temporary name beside it, hashed on the way, then
 * renamed: a file under its own name is always complete), a file's sha256, and a CSV
 * manifest read back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import type { Logger } from '../logger.js';
import type { RealtyClient } from '../realty/client.js';
import type { GatewayRetryOptions } from '../realty/gateway-retry.js';
import type { Database } from '../db/database.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

/** What a command that puts a batch's docflow files in a folder (or reads them back) is given. */
export interface BatchFilesOptions {
  redis: Redis;
  keys: Keys;
  /** The system of record: the docflows' states. */
  db: Database;
  client: RealtyClient;
  batch: string;
  /** The batch's rows. */
  total: number;
  dir: string;
  /** Docflows handled at once (default 4). */
  concurrency?: number;
  retry?: GatewayRetryOptions;
  logger?: Logger;
}

/** A name that stays inside its folder whatever the gateway or the bank put in an id. */
export function safeName(id: string): string {
  const name = id.normalize('NFC').replace(/[^\p{L}\p{N}._-]/gu, '_');
  return name === '' || /^\.+$/.test(name) ? `_${name}` : name.slice(0, 120);
}

const EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'application/x-pkcs7-signature': 'sig',
  'application/pkcs7-signature': 'sig',
  'application/pgp-signature': 'asc',
  'application/zip': 'zip',
};

/** The file's extension from its Content-Type (its parameters ignored), `bin` when unknown. */
export function extensionOf(contentType: string): string {
  return EXTENSIONS[contentType.split(';')[0]!.trim().toLowerCase()] ?? 'bin';
}

/** The size of a regular file, undefined when there is none. */
export async function sizeOf(path: string): Promise<number | undefined> {
  return stat(path).then(
    (s) => (s.isFile() ? s.size : undefined),
    () => undefined,
  );
}

/** The sha256 of a file's bytes, in hex, read as a stream. */
export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Runs `fn` over `items`, `limit` at a time, in order of start. */
export async function eachLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * The lines of a CSV file with a header, as objects; none when there is no file. A line
 * cut short (a crash while it was appended) is passed over.
 */
export async function readCsvLines<T extends Record<string, string>>(path: string): Promise<T[]> {
  const lines: T[] = [];
  if ((await sizeOf(path)) === undefined) return lines;
  const source = createReadStream(path);
  const parser = source.pipe(parse({ columns: true, bom: true, skip_empty_lines: true, skip_records_with_error: true }));
  // A read error ends the parse with it (pipe alone would leave it unhandled).
  source.once('error', (err) => parser.destroy(err));
  for await (const line of parser as AsyncIterable<T>) lines.push(line);
  return lines;
}

export interface SavedFile {
  /** `<fileId>.<ext>`, safe for the folder. */
  name: string;
  bytes: number;
  sha256: string;
}

/**
 * Downloads a docflow's file into `folder` as `<fileId>.<ext>` (the extension from its
 * Content-Type). `keep(name, had, length)` is asked first, with the size of a file of that
 * name already there and the size the gateway announces: true leaves that file as it is
 * (the answer's body is not read) and gives 'kept'.
 */
export async function saveDocflowFile(
  client: RealtyClient,
  docflowId: string,
  fileId: string,
  folder: string,
  keep: (name: string, had: number | undefined, length: number | undefined) => boolean = () => false,
): Promise<SavedFile | 'kept'> {
  const download = await client.downloadFile(docflowId, fileId);
  const name = `${safeName(fileId)}.${extensionOf(download.contentType)}`;
  const target = join(folder, name);
  if (keep(name, await sizeOf(target), download.length)) {
    download.stream.destroy();
    return 'kept';
  }
  const temporary = join(folder, `.${name}.${randomBytes(4).toString('hex')}.part`);
  const hash = createHash('sha256');
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      bytes += chunk.length;
      callback(null, chunk);
    },
  });
  try {
    await pipeline(download.stream, counter, createWriteStream(temporary, { flags: 'wx' }));
    if (download.length !== undefined && bytes !== download.length)
      throw new Error(`the gateway announced ${download.length} bytes for ${name} and sent ${bytes}`);
    await rename(temporary, target);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
  return { name, bytes, sha256: hash.digest('hex') };
}

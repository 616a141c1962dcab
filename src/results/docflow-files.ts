/**
 * What the commands that put a docflow's files in a folder share (`documents`, `to-sign`,
 * `sign`): a name that stays inside its folder, a deal's folder that is a folder and not a
 * link to elsewhere, the extension from the Content-Type, a file streamed whole to its place
 * (a temporary name beside it, created 0600, hashed on the way, then renamed: a file under its
 * own name is always complete), a file's sha256, and a CSV manifest written with its formula
 * cells defused and read back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import { OutputError } from '../errors.js';
import { createAtomicFile, PRIVATE_FILE_MODE } from '../files/atomic-file.js';
import { openRegularFile } from '../files/regular-file.js';
import { readCell, safeCell } from '../input/csv-cell.js';
import { isXlsxPath } from '../input/rejects.js';
import { csvSink } from './csv-sink.js';
import { createTableFile, type TableFile } from './table-file.js';
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
  /** A copy of the folder's manifest for a person (`--manifest`): `.xlsx` a workbook, else Russian Excel's CSV. */
  manifestCopy?: string;
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

/** The size of a regular file, undefined when there is none (a link to one counts as none: it is not ours). */
export async function sizeOf(path: string): Promise<number | undefined> {
  return lstat(path).then(
    (s) => (s.isFile() ? s.size : undefined),
    () => undefined,
  );
}

/**
 * The sha256 of a regular file's bytes, in hex, read through one descriptor opened without
 * following a link or blocking (a FIFO put in a file's place is refused, not waited on).
 */
export async function sha256Of(path: string): Promise<string> {
  const file = await openRegularFile(path);
  try {
    const hash = createHash('sha256');
    await file.readAll((chunk) => hash.update(chunk));
    return hash.digest('hex');
  } finally {
    await file.close();
  }
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
  // The cells as they were before csvText defused them (a dealId `-7` was written `'-7`).
  for await (const line of parser as AsyncIterable<T>)
    lines.push(Object.fromEntries(Object.entries(line).map(([k, v]) => [k, readCell(v)])) as T);
  return lines;
}

/**
 * A manifest's or journal's lines as CSV, every cell a spreadsheet would run (`=`, `+`, `-`,
 * `@`, tab, CR first) written with a `'` in front, as the results file's are (readCsvLines
 * takes it off again).
 */
export function csvText(lines: ReadonlyArray<Record<string, string>>, columns: readonly string[], header = true): string {
  return stringify(lines as Array<Record<string, string>>, { header, columns: [...columns], cast: { string: (value) => safeCell(value) } });
}

/**
 * `<dir>/<name>`, made when missing (0700), and refused when what stands there is not a folder
 * of its own: a link put in a deal's place would have its files written wherever it leads.
 * Its identity, for `sameFolder` to check again before a file is put in it.
 */
export async function ownFolder(dir: string, name: string): Promise<{ path: string; dev: number; ino: number }> {
  const path = join(dir, name);
  await mkdir(path, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  const info = await lstat(path);
  if (!info.isDirectory() || info.isSymbolicLink())
    throw new OutputError(
      `${path} is not a folder (a link or a file stands there), so nothing is written through it: remove it and run again.`,
    );
  return { path, dev: info.dev, ino: info.ino };
}

/** Throws when the folder `ownFolder` checked was replaced since (by a link, or another folder). */
async function sameFolder(folder: { path: string; dev: number; ino: number }): Promise<void> {
  const info = await lstat(folder.path).catch(() => undefined);
  if (!info || info.isSymbolicLink() || !info.isDirectory() || info.dev !== folder.dev || info.ino !== folder.ino)
    throw new OutputError(
      `${folder.path} was replaced while a file was written into it (a link or another folder stands there), so the file was not kept.`,
    );
}

export interface SavedFile {
  /** `<fileId>.<ext>`, safe for the folder. */
  name: string;
  bytes: number;
  sha256: string;
}

/**
 * Downloads a docflow's file into `folder` (checked by ownFolder) as `<fileId>.<ext>` (the
 * extension from its Content-Type). `keep(name, had, length)` is asked first, with the size of
 * a file of that name already there and the size the gateway announces: true leaves that file
 * as it is (the answer's body is not read) and gives 'kept'. A file past the client's download
 * cap fails (DownloadTooLargeError) and nothing of it stays.
 */
export async function saveDocflowFile(
  client: RealtyClient,
  docflowId: string,
  fileId: string,
  folder: { path: string; dev: number; ino: number },
  keep: (name: string, had: number | undefined, length: number | undefined) => boolean = () => false,
): Promise<SavedFile | 'kept'> {
  const download = await client.downloadFile(docflowId, fileId);
  const name = `${safeName(fileId)}.${extensionOf(download.contentType)}`;
  const target = join(folder.path, name);
  if (keep(name, await sizeOf(target), download.length)) {
    download.stream.destroy();
    return 'kept';
  }
  const temporary = join(folder.path, `.${name}.${randomBytes(4).toString('hex')}.part`);
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
    // `wx`: a new file, never a link or a file already at the name; 0600, its owner's alone.
    const file = createWriteStream(temporary, { flags: 'wx', mode: PRIVATE_FILE_MODE });
    await new Promise<void>((resolve, reject) => file.once('open', () => resolve()).once('error', reject));
    // Made inside the folder ownFolder checked, not inside whatever replaced it since.
    await sameFolder(folder).catch((err: unknown) => {
      file.destroy();
      throw err;
    });
    await pipeline(download.stream, counter, file);
    if (download.length !== undefined && bytes !== download.length)
      throw new Error(`the gateway announced ${download.length} bytes for ${name} and sent ${bytes}`);
    await sameFolder(folder);
    await rename(temporary, target);
  } catch (err) {
    download.stream.destroy();
    await rm(temporary, { force: true });
    throw err;
  }
  return { name, bytes, sha256: hash.digest('hex') };
}

/**
 * A manifest's copy for a person (`documents --manifest <file>`): a workbook when the path ends
 * in `.xlsx` (ids and sha256 as text cells, sizes as numbers), else a CSV in Russian Excel's
 * form (a BOM, `;`, CRLF, ids kept as text). Created 0600, whole or not at all. The folder's
 * own manifest.csv stays the tool's memory of what was downloaded.
 */
export async function writeManifestCopy(
  path: string,
  lines: ReadonlyArray<Record<string, string>>,
  columns: readonly string[],
): Promise<void> {
  const file: TableFile = isXlsxPath(path)
    ? await createTableFile(path, columns, { mode: PRIVATE_FILE_MODE })
    : await createAtomicFile(path, { through: [csvSink(columns, true)], mode: PRIVATE_FILE_MODE });
  try {
    for (const line of lines) await file.write(line);
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
}

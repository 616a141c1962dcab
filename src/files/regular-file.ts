/**
 * A file the tool reads that someone else put there (an agreement, a detached signature, a
 * file to-sign wrote that the bank signs): opened without following a link at its last name
 * and without blocking (a FIFO put in a file's place would hold one of libuv's four file
 * threads until a writer came, and the process with it), refused unless the descriptor is a
 * regular file, and every open and read of it bounded by a deadline. What is checked and what
 * is read is the one descriptor: a file swapped after the check is not the one read.
 */
import { close, constants, fstat, open, read, type Stats } from 'node:fs';

/**
 * The longest one open or one read of such a file may take (ms). A local disk answers in
 * milliseconds; a network share that stops answering would otherwise hold the row for good.
 */
export const FILE_READ_TIMEOUT_MS = 30_000;

/**
 * How much older than a read a file's change time (ctime) must be for the read to stand for it:
 * the kernel stamps a change with a clock that moves in ticks (a jiffy, up to 10 ms; a network
 * share's server, a FAT disk's 2 s), so a write in the same tick as the load's read could keep
 * the ctime it saw. Files a night sends were put there long before; a file younger than this is
 * hashed again before its upload, as every file used to be.
 */
export const CHANGE_TIME_SETTLED_MS = 2_000;

/** `stats`' ctime when it is older than CHANGE_TIME_SETTLED_MS at `readAtMs` (this host's clock), else undefined. */
export function settledChangeTimeMs(stats: Pick<Stats, 'ctimeMs'>, readAtMs: number): number | undefined {
  return readAtMs - stats.ctimeMs >= CHANGE_TIME_SETTLED_MS ? stats.ctimeMs : undefined;
}

/** Bytes read at a time by readAll. */
const CHUNK = 512 * 1024;

/** Why a file was not read; `reason` says which, the caller words it for its user (never with the path in a row's message). */
export class FileRefusedError extends Error {
  /** `link`: a link stands at its name; `not-regular`: a FIFO, a device, a socket or a folder; `timeout`: the disk did not answer; `too-large`: past the caller's limit. */
  readonly reason: 'link' | 'not-regular' | 'timeout' | 'too-large';
  constructor(reason: FileRefusedError['reason'], what: string, ms = FILE_READ_TIMEOUT_MS) {
    super(`${what} ${reason === 'timeout' ? `did not answer a read within ${Math.ceil(ms / 1000)} s` : REASONS[reason]}`);
    this.reason = reason;
  }
}

const REASONS: Record<Exclude<FileRefusedError['reason'], 'timeout'>, string> = {
  link: 'is a symbolic link, not a file',
  'not-regular': 'is not a regular file (a pipe, a device, a socket or a folder)',
  'too-large': 'is larger than it may be',
};

export interface OpenRegularOptions {
  /** Per open or read (ms); FILE_READ_TIMEOUT_MS when not given. */
  timeoutMs?: number;
}

/** A regular file opened by openRegularFile: its descriptor, its fstat, and reads with a deadline. */
export class RegularFile {
  readonly fd: number;
  /** fstat of the descriptor as it was opened: the file that is read, whatever its name leads to now. */
  readonly stats: Stats;
  readonly #name: string;
  readonly #ms: number;
  /** Reads under way (one that timed out still runs on its thread until the disk answers). */
  #reading = 0;
  #closing: Promise<void> | undefined;
  #whenIdle: (() => void) | undefined;

  constructor(fd: number, stats: Stats, name: string, ms: number) {
    this.fd = fd;
    this.stats = stats;
    this.#name = name;
    this.#ms = ms;
  }

  /** Reads into `buffer` from `position` (null: where the last read ended): the bytes read, 0 at the end. FileRefusedError `timeout` after the deadline. */
  read(buffer: Buffer, position: number | null, length = buffer.length, offset = 0): Promise<number> {
    if (this.#closing) return Promise.reject(new Error(`${this.#name} is closed`));
    this.#reading++;
    return bounded<number>(
      this.#ms,
      this.#name,
      (done) => read(this.fd, buffer, offset, length, position, done),
      () => {
        this.#reading--;
        if (this.#reading === 0) this.#whenIdle?.();
      },
    );
  }

  /**
   * Every byte from the start, each read given to `onChunk` (valid until it returns); the size.
   * Past `limit` bytes it stops with FileRefusedError `too-large`, having read at most one chunk more.
   */
  async readAll(onChunk: (chunk: Buffer) => void, limit = Number.POSITIVE_INFINITY): Promise<number> {
    const buffer = Buffer.allocUnsafe(CHUNK);
    for (let position = 0; ;) {
      const got = await this.read(buffer, position);
      if (got === 0) return position;
      position += got;
      if (position > limit) throw new FileRefusedError('too-large', this.#name);
      onChunk(buffer.subarray(0, got));
    }
  }

  /** The whole file, when it holds at most `limit` bytes. */
  async readWhole(limit: number): Promise<Buffer> {
    const chunks: Buffer[] = [];
    await this.readAll((chunk) => chunks.push(Buffer.from(chunk)), limit);
    return Buffer.concat(chunks);
  }

  /**
   * Closes the descriptor: at once, or once the reads under way end (its number could be
   * reused by another file by then). Never waits for a read stuck on a dead disk.
   */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const go = (): void => close(this.fd, () => resolve());
      if (this.#reading === 0) go();
      else this.#whenIdle = go;
    });
    return this.#reading === 0 ? this.#closing : Promise.resolve();
  }
}

/**
 * Opens `path` read-only with O_NOFOLLOW and O_NONBLOCK and refuses what fstat does not call a
 * regular file. ENOENT, EACCES and the like are thrown as Node gives them; a link at the last
 * name (ELOOP) is FileRefusedError `link`. `name` words the file in errors (the path when not given).
 */
export async function openRegularFile(path: string, options: OpenRegularOptions & { name?: string } = {}): Promise<RegularFile> {
  const ms = options.timeoutMs ?? FILE_READ_TIMEOUT_MS;
  const name = options.name ?? path;
  let timedOut = false;
  const fd = await bounded<number>(
    ms,
    name,
    (done) =>
      open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK, (err, value) => {
        // An open that answers after its deadline: nobody holds its descriptor, so it is closed.
        if (timedOut && !err) close(value, () => undefined);
        done(err, value);
      }),
    undefined,
    () => (timedOut = true),
  ).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ELOOP' ? new FileRefusedError('link', name) : err;
  });
  let stats: Stats;
  try {
    stats = await bounded<Stats>(ms, name, (done) => fstat(fd, done));
  } catch (err) {
    close(fd, () => undefined);
    throw err;
  }
  if (!stats.isFile()) {
    await new Promise<void>((resolve) => close(fd, () => resolve()));
    throw new FileRefusedError('not-regular', name);
  }
  return new RegularFile(fd, stats, name, ms);
}

/**
 * `start` with a Node-style callback, rejected with FileRefusedError `timeout` after `ms`.
 * `ended` is called when the callback comes, in time or late; `expired` when the deadline passes first.
 */
function bounded<T>(
  ms: number,
  name: string,
  start: (done: (err: NodeJS.ErrnoException | null, value: T) => void) => void,
  ended?: () => void,
  expired?: () => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let over = false;
    const timer = setTimeout(() => {
      over = true;
      expired?.();
      reject(new FileRefusedError('timeout', name, ms));
    }, ms);
    start((err, value) => {
      clearTimeout(timer);
      ended?.();
      if (over) return;
      if (err) reject(err);
      else resolve(value);
    });
  });
}

/**
 * The load's reading half: an input's records read, validated, their files looked at, and
 * each valid deal packed as its job keeps it (`c`, src/queue/deal-pack.ts), in chunks. The
 * enqueue half (load-batch.ts, enqueue.ts) sends them. Either in this thread
 * (`readChunksHere`) or in a worker thread of its own (`readChunksInThread`, read-thread.ts):
 * reading and validating is most of a load's CPU, and in a thread of its own it runs beside
 * the enqueueing instead of between its round trips (docs/performance.md). Both run this same
 * code; only the transport differs.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ConfigError, InputError, UsageError } from '../errors.js';
import type { FieldProblem } from '../domain/deal.js';
import { createDocumentFileChecker } from '../input/document-files.js';
import type { InputFile, InputOptions, InputRecord } from '../input/open-input.js';
import { createDealValidator } from '../input/validate-deal.js';
import { packDealCompact, type PackedDeal } from '../queue/deal-pack.js';
import { kindOf, namesFiles, rowDocuments } from '../docflows/registry.js';

/** A valid row, its deal packed (`c`): row, dealId, packed deal. */
export type ReadRow = [row: number, dealId: string, deal: PackedDeal, key?: string];

/** A refused row: the record (the rejects file writes it back) and its problems. */
export interface RefusedRow {
  record: InputRecord;
  problems: FieldProblem[];
}

export interface ReadChunk {
  valid: ReadRow[];
  refused: RefusedRow[];
  /** Bytes of the file read once this chunk was (progress). */
  bytes: number;
  /** CSV: the header row as written, on the first chunk (the rejects file starts with it). */
  header?: string[];
}

export interface ReadOptions {
  file: string;
  /** The input's reading, as `openInput` resolved it (format, encoding, delimiter) and the mapping. */
  reading: InputOptions;
  filesRoot?: string;
  /** The rows' docflow type (its columns are read beside the object's and owners'); absent: registrations. */
  type?: string;
  /** The order the rows belong to (DealValidatorOptions.order). */
  order?: string;
  /** Rows (valid and refused) a chunk; the last may have fewer. */
  chunkSize: number;
}

/** What the reading learns of the file as it goes: the header (rejects file) and unknown columns (summary). */
export interface ReadEnd {
  header: string[] | undefined;
  unknownColumns: string[];
}

/** An input's chunks, read here. `input` is the file `openInput` opened with `options.reading`. */
export async function* readChunksHere(input: InputFile, options: ReadOptions): AsyncGenerator<ReadChunk, ReadEnd> {
  const kind = kindOf(options.type);
  const validate = createDealValidator({ own: kind.own, ...(options.order !== undefined && { order: options.order }) });
  const checkFiles = createDocumentFileChecker({
    baseDir: dirname(resolve(options.file)),
    documentsOf: rowDocuments,
    ...(options.filesRoot !== undefined && { filesRoot: resolve(options.filesRoot) }),
  });
  let chunk: ReadChunk = { valid: [], refused: [], bytes: 0 };
  let first = true;
  const done = (): ReadChunk => {
    chunk.bytes = input.bytesRead();
    const header = input.header();
    if (first && header) chunk.header = header;
    first = false;
    return chunk;
  };
  for await (const record of input.records()) {
    const result = validate(record.fields);
    // A row's files are looked at once the row is valid otherwise: a missing one makes it invalid, naming the field.
    const fileProblems = result.ok && namesFiles(result.deal) ? await checkFiles(result.deal) : [];
    if (result.ok && record.problems.length === 0 && fileProblems.length === 0) {
      const key = kind.ledgerKey?.(result.deal);
      const packed = packDealCompact(result.deal);
      chunk.valid.push(key === undefined ? [record.row, result.deal.dealId, packed] : [record.row, result.deal.dealId, packed, key]);
    } else {
      const problems = result.ok ? [...record.problems, ...fileProblems] : [...record.problems, ...result.problems];
      chunk.refused.push({ record, problems });
    }
    if (chunk.valid.length + chunk.refused.length >= options.chunkSize) {
      yield done();
      chunk = { valid: [], refused: [], bytes: 0 };
    }
  }
  if (chunk.valid.length + chunk.refused.length > 0) yield done();
  return { header: input.header(), unknownColumns: input.unknownColumns() };
}

/** From the thread: a chunk, the end, or the error that ended the reading. */
export type ThreadMessage = { kind: 'chunk'; chunk: ReadChunk } | { kind: 'end'; end: ReadEnd } | { kind: 'error'; error: ThreadError };

/** An error as it crosses from the thread: its class's name, message and, for a system error, its code. */
export interface ThreadError {
  name: string;
  message: string;
  code?: string;
}

/**
 * The thread posts its rows this many at a time, and reads at most THREAD_AHEAD_POSTS posts
 * ahead of what the load took (it waits for a credit beyond them: memory stays bounded). Posts
 * smaller than the load's chunks keep the rows the thread holds few, so that its young
 * generation can be small (THREAD_YOUNG_MB): a scavenge copies what is alive, and rows held
 * for a whole chunk would live through scavenges and be promoted to the old generation.
 */
export const THREAD_POST_ROWS = 100;
export const THREAD_AHEAD_POSTS = 10;
/** The thread's young generation, below V8's default: what the thread allocates is short-lived rows, and a smaller nursery holds less of them at once (docs/performance.md). */
const THREAD_YOUNG_MB = 8;

/** The compiled thread's entry, beside this file; absent when this file runs as TypeScript source (the tests). */
const THREAD_ENTRY = fileURLToPath(new URL('./read-thread.js', import.meta.url));

/** Whether `readChunksInThread` can run: the build (dist/) has the thread's entry; TypeScript run from source does not. */
export const canReadInThread = (): boolean => import.meta.url.endsWith('.js') && existsSync(THREAD_ENTRY);

/**
 * An input's chunks, read in a worker thread (read-thread.ts), regrouped in chunks of
 * `options.chunkSize` rows. The thread is ended when the caller stops early. An error of the
 * reading (InputError, a file that cannot be read) is thrown here as it was there.
 */
export async function* readChunksInThread(options: ReadOptions): AsyncGenerator<ReadChunk, ReadEnd> {
  const posts = threadPosts({ ...options, chunkSize: THREAD_POST_ROWS });
  let chunk: ReadChunk = { valid: [], refused: [], bytes: 0 };
  try {
    for (;;) {
      const next = await posts.next();
      if (next.done) {
        if (chunk.valid.length + chunk.refused.length > 0) yield chunk;
        return next.value;
      }
      const post = next.value;
      if (post.header) chunk.header = post.header;
      // A post's rows in order, valid and refused apart: a chunk is full at chunkSize rows, whichever.
      let v = 0;
      let r = 0;
      while (v < post.valid.length || r < post.refused.length) {
        const room = options.chunkSize - chunk.valid.length - chunk.refused.length;
        const takeValid = Math.min(room, post.valid.length - v);
        for (const row of post.valid.slice(v, v + takeValid)) chunk.valid.push(row);
        v += takeValid;
        const takeRefused = Math.min(room - takeValid, post.refused.length - r);
        for (const row of post.refused.slice(r, r + takeRefused)) chunk.refused.push(row);
        r += takeRefused;
        chunk.bytes = post.bytes;
        if (chunk.valid.length + chunk.refused.length >= options.chunkSize) {
          yield chunk;
          chunk = { valid: [], refused: [], bytes: 0 };
        }
      }
    }
  } finally {
    await posts.return(undefined as never);
  }
}

/** The thread's posts as they come (see THREAD_POST_ROWS); the thread is ended on the way out. */
async function* threadPosts(options: ReadOptions): AsyncGenerator<ReadChunk, ReadEnd> {
  const worker = new Worker(THREAD_ENTRY, {
    workerData: options,
    stdout: false,
    stderr: false,
    resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_MB },
  });
  const arrived: ThreadMessage[] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    wake?.();
    wake = undefined;
  };
  worker.on('message', (message: ThreadMessage) => {
    arrived.push(message);
    notify();
  });
  worker.on('error', (err) => {
    failure ??= err;
    notify();
  });
  // A post that cannot be read back would be rows with neither a job nor an outcome: the load fails instead.
  let lost: Error | undefined;
  worker.on('messageerror', (err) => {
    lost ??= new Error(`a post of the reading thread could not be read: ${err.message}`);
    notify();
  });
  worker.on('exit', (code) => {
    failure ??= new Error(`the reading thread stopped (exit code ${code}) before the end of the input`);
    notify();
  });
  try {
    for (;;) {
      if (lost) throw lost;
      const message = arrived.shift();
      if (!message) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if (message.kind === 'end') return message.end;
      if (message.kind === 'error') throw threadError(message.error);
      worker.postMessage('more');
      yield message.chunk;
    }
  } finally {
    worker.removeAllListeners();
    // An error the thread reports while it is ended (it ran out of memory, say) is the load's failure, already thrown or moot.
    worker.on('error', () => undefined);
    await worker.terminate();
  }
}

/** The reading's error as the thread raised it: the project's own classes keep their class (and exit code). */
function threadError(error: ThreadError): Error {
  const known: Record<string, new (message: string) => Error> = { InputError, UsageError, ConfigError };
  const Known = known[error.name];
  if (Known) return new Known(error.message);
  const err: NodeJS.ErrnoException = new Error(error.message);
  err.name = error.name;
  if (error.code !== undefined) err.code = error.code;
  return err;
}

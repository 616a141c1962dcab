import { lstat, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { OutputError } from '../../src/errors.js';
import { createAtomicFile, writeFileAtomically } from '../../src/files/atomic-file.js';
import { writeChunk } from '../../src/files/write-chunk.js';
import { openInput, type InputRecord } from '../../src/input/open-input.js';
import { createRejectsWriter, createRowsWriter } from '../../src/input/rejects.js';
import { ROOT } from '../helpers/cli.js';

const PREVIOUS = 'the previous good file\n';
const SAMPLE = join(ROOT, 'samples/deals.csv');

const temporaries = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((name) => name.endsWith('.tmp'));

async function sampleRecords(): Promise<{ input: Awaited<ReturnType<typeof openInput>>; records: InputRecord[] }> {
  const input = await openInput(SAMPLE);
  const records: InputRecord[] = [];
  for await (const record of input.records()) records.push(record);
  return { input, records };
}

describe('an output file written whole or not at all', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-atomic-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('leaves the previous file byte-identical, and no temporary file, when the producer throws half-way', async () => {
    const out = join(dir, 'summary.json');
    await writeFile(out, PREVIOUS);
    const file = await createAtomicFile(out);
    const produce = async (): Promise<void> => {
      for (let i = 0; i < 1000; i++) {
        if (i === 500) throw new Error('the producer failed');
        await file.write(`line ${i}\n`.repeat(20));
      }
      await file.commit();
    };
    await expect(
      produce().catch(async (err: unknown) => {
        await file.abort();
        throw err;
      }),
    ).rejects.toThrow('the producer failed');
    expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
    expect(await temporaries(dir)).toEqual([]);
  });

  it('creates the folder, and puts the whole content in place on commit', async () => {
    const out = join(dir, 'a', 'b', 'summary.json');
    await writeFileAtomically(out, '{"ok":true}\n');
    expect(await readFile(out, 'utf8')).toBe('{"ok":true}\n');
    expect(await temporaries(join(dir, 'a', 'b'))).toEqual([]);
  });

  it('replaces a symlink at the target name instead of writing through it', async () => {
    const elsewhere = join(dir, 'elsewhere.txt');
    const out = join(dir, 'summary.json');
    await writeFile(elsewhere, PREVIOUS);
    await symlink(elsewhere, out);
    await writeFileAtomically(out, 'new\n');
    expect(await readFile(elsewhere, 'utf8')).toBe(PREVIOUS);
    expect((await lstat(out)).isSymbolicLink()).toBe(false);
    expect(await readFile(out, 'utf8')).toBe('new\n');
  });

  it('rejects instead of hanging when the stream fails while a write waits for drain', { timeout: 2000 }, async () => {
    // A file that takes the first chunk and never finishes writing it: 'drain' never comes.
    const stuck = new Writable({ highWaterMark: 4, write: () => undefined });
    const waiting = writeChunk(stuck, 'more than four bytes');
    setImmediate(() => stuck.destroy(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO', syscall: 'write' })));
    await expect(waiting).rejects.toThrow('EIO');
  });

  it(
    'rejects with one sentence naming the file when a stream of the chain fails while a write waits for drain',
    { timeout: 2000 },
    async () => {
      const out = join(dir, 'results.csv');
      await writeFile(out, PREVIOUS);
      // Holds every chunk: the head fills up and the writer waits for 'drain'.
      const stalled = new Transform({ highWaterMark: 4, transform: () => undefined });
      const file = await createAtomicFile(out, { through: [stalled] });
      const waiting = file.write('more than four bytes');
      setImmediate(() =>
        stalled.destroy(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' })),
      );
      const err = await waiting.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OutputError);
      expect((err as OutputError).message).toBe(
        `Could not write ${out} (no space left on device); the previous file, if any, is unchanged.`,
      );
      await file.abort();
      expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
      expect(await temporaries(dir)).toEqual([]);
    },
  );

  it('writes a device such as /dev/full in place and says in one sentence that it could not', { timeout: 2000 }, async () => {
    const err = await writeFileAtomically('/dev/full', 'x'.repeat(100_000)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OutputError);
    expect((err as OutputError).message).toBe('Could not write /dev/full (no space left on device).');
  });

  it('drops what was written when the caller aborts, and keeps the previous file', async () => {
    const out = join(dir, 'results.jsonl');
    await writeFile(out, PREVIOUS);
    const stop = new AbortController();
    const file = await createAtomicFile(out, { signal: stop.signal });
    await file.write('{"row":1}\n');
    stop.abort(new Error('shutting down'));
    await expect(file.write('{"row":2}\n')).rejects.toThrow('shutting down');
    await expect(file.commit()).rejects.toThrow('shutting down');
    expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
    expect(await temporaries(dir)).toEqual([]);
  });
});

describe('the rejects and attention writers', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-rows-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the previous attention file byte-identical while writing, and after abort leaves no temporary file', async () => {
    const out = join(dir, 'attention.csv');
    await writeFile(out, PREVIOUS);
    const { input, records } = await sampleRecords();
    const writer = createRowsWriter(out, input, ['row', 'outcome', 'hint', 'errors'], { always: true });
    for (const record of records.slice(0, 3))
      await writer.write(record, { row: record.row, outcome: 'not_found', hint: 'check it', errors: '' });
    expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
    await writer.abort();
    expect(await readFile(out, 'utf8')).toBe(PREVIOUS);
    expect(await temporaries(dir)).toEqual([]);
  });

  it('puts the whole attention file in place on close, header included, even with no row', async () => {
    const out = join(dir, 'attention.csv');
    await writeFile(out, PREVIOUS);
    const { input } = await sampleRecords();
    const written = await createRowsWriter(out, input, ['row', 'outcome', 'hint', 'errors'], { always: true }).close();
    expect(written).toEqual({ file: out, rows: 0 });
    const text = await readFile(out, 'utf8');
    expect(text).toMatch(/^row,outcome,hint,errors,dealId,.*,agreementFileType\n$/);
    expect(await temporaries(dir)).toEqual([]);
  });

  it('writes no rejects file, and leaves no temporary file, when no row was refused', async () => {
    const { input } = await sampleRecords();
    const written = await createRejectsWriter(join(dir, 'deals.rejects.csv'), input).close();
    expect(written.rows).toBe(0);
    expect(await readdir(dir)).toEqual([]);
  });

  it('stops with one sentence naming the rejects file when it cannot be written', { timeout: 2000 }, async () => {
    const { input, records } = await sampleRecords();
    const writer = createRejectsWriter('/dev/full', input);
    const failed = async (): Promise<void> => {
      // The device takes a few chunks before it answers: write until it does.
      for (let i = 0; i < 2000; i++) await writer.write(records[i % records.length]!, [{ field: 'dealId', message: 'is required' }]);
      await writer.close();
    };
    const err = await failed().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OutputError);
    expect((err as OutputError).message).toBe('Could not write /dev/full (no space left on device).');
    await expect(writer.close()).rejects.toBeInstanceOf(OutputError);
  });
});

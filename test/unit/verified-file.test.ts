/**
 * The file an upload streams, checked against the load's size and sha256 as it is read
 * (src/worker/verified-file.ts): its reads, what it holds back, how a changed file fails it,
 * and that its file is closed however it ends.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { DocumentChangedError } from '../../src/errors.js';
import { READ_BYTES, verifiedFile, type ExpectedFile } from '../../src/worker/verified-file.js';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const openFiles = async (): Promise<number> => (await readdir('/proc/self/fd')).length;

/** Every chunk the stream gives, and how it ended. */
async function drain(stream: Readable): Promise<{ chunks: Buffer[]; error: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { chunks, error: undefined };
  } catch (error) {
    return { chunks, error };
  }
}

const total = (chunks: Buffer[]): number => chunks.reduce((sum, c) => sum + c.length, 0);

describe('a file streamed for upload, checked against what the load saw', () => {
  let dir: string;
  let path: string;
  const write = async (bytes: Buffer): Promise<ExpectedFile> => {
    await writeFile(path, bytes);
    return { path, size: bytes.length, sha256: sha256(bytes) };
  };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-verified-'));
    path = join(dir, 'agreement.pdf');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives a 2 MB file as it is on disk in reads of 512 KiB (not fs streams’ 64 KiB), and closes it', async () => {
    const bytes = randomBytes(2 * 1024 * 1024);
    const expected = await write(bytes);
    const before = await openFiles();
    const verified = verifiedFile(expected, 'agreementFile');
    const { chunks, error } = await drain(verified.open());
    expect(error).toBeUndefined();
    expect(READ_BYTES).toBe(512 * 1024);
    expect(chunks.map((c) => c.length)).toEqual([READ_BYTES, READ_BYTES, READ_BYTES, READ_BYTES]);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    expect(verified.changed).toBeUndefined();
    expect(await openFiles()).toBe(before);
  });

  it('gives a file smaller than one read in one chunk, and a file that is not a whole number of reads to its last byte', async () => {
    const small = randomBytes(1000);
    expect(Buffer.concat((await drain(verifiedFile(await write(small), 'agreementFile').open())).chunks).equals(small)).toBe(true);
    const odd = randomBytes(READ_BYTES * 2 + 12_345);
    const { chunks, error } = await drain(verifiedFile(await write(odd), 'agreementFile').open());
    expect(error).toBeUndefined();
    expect(chunks.map((c) => c.length)).toEqual([READ_BYTES, READ_BYTES, 12_345]);
    expect(Buffer.concat(chunks).equals(odd)).toBe(true);
  });

  it('holds its last read back from a file changed in place (same size): fails DOCUMENT_CHANGED (content) without giving it', async () => {
    const bytes = randomBytes(READ_BYTES * 2 + 100);
    const expected = await write(bytes);
    bytes[bytes.length - 1] = bytes.at(-1)! ^ 0xff;
    await writeFile(path, bytes);
    const verified = verifiedFile(expected, 'agreementSignatureFiles', 2);
    const { chunks, error } = await drain(verified.open());
    expect(error).toBeInstanceOf(DocumentChangedError);
    expect(error).toBe(verified.changed);
    expect((error as Error).message).toMatch(/^agreementSignatureFiles: file 2 changed on disk after the load \(its sha256/);
    // The gateway waits for Content-Length bytes: it never has the whole (changed) content.
    expect(total(chunks)).toBe(READ_BYTES * 2);
  });

  it('fails a file that grew as soon as a read passes the load’s size, having given less than that size', async () => {
    const bytes = randomBytes(READ_BYTES * 3);
    const expected = { ...(await write(bytes)), size: READ_BYTES * 2 - 10 };
    const verified = verifiedFile(expected, 'agreementFile');
    const { chunks, error } = await drain(verified.open());
    expect(error).toBeInstanceOf(DocumentChangedError);
    expect((error as Error).message).toMatch(/\(its size is not what the load saw\)/);
    expect(total(chunks)).toBeLessThan(expected.size);
  });

  it('fails a file that shrank, and one whose sha256 is not the load’s, without giving the last read', async () => {
    const bytes = randomBytes(READ_BYTES + 500);
    const shrunk = { ...(await write(bytes)), size: bytes.length + 1 };
    const first = await drain(verifiedFile(shrunk, 'agreementFile').open());
    expect((first.error as Error).message).toMatch(/\(its size is not what the load saw\)/);
    expect(total(first.chunks)).toBe(READ_BYTES);
    const other = { ...shrunk, size: bytes.length, sha256: sha256(Buffer.from('another file')) };
    const second = await drain(verifiedFile(other, 'agreementFile').open());
    expect((second.error as Error).message).toMatch(/\(its sha256 is not what the load saw\)/);
    expect(total(second.chunks)).toBe(READ_BYTES);
  });

  it('says a deleted file, or a folder where the file was, can no longer be read', async () => {
    const expected = await write(randomBytes(100));
    await rm(path);
    const deleted = verifiedFile(expected, 'agreementFile');
    expect(((await drain(deleted.open())).error as Error).message).toMatch(/\(it can no longer be read/);
    expect(deleted.changed).toBeInstanceOf(DocumentChangedError);
    await mkdir(path);
    const folder = verifiedFile(expected, 'agreementFile');
    expect(((await drain(folder.open())).error as Error).message).toMatch(/\(it can no longer be read/);
  });

  it('opens the file anew for each stream, and closes it when a stream is destroyed half-way', async () => {
    const bytes = randomBytes(READ_BYTES * 4);
    const verified = verifiedFile(await write(bytes), 'agreementFile');
    const before = await openFiles();
    const stream = verified.open();
    await new Promise<void>((resolve) => stream.once('data', () => resolve()));
    // Destroyed as the client does when an answer comes before the whole body was sent.
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    expect(await openFiles()).toBe(before);
    const again = await drain(verified.open());
    expect(Buffer.concat(again.chunks).equals(bytes)).toBe(true);
    expect(verified.changed).toBeUndefined();
  });
});

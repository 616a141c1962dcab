/**
 * The file an upload streams (src/worker/verified-file.ts): checked before its first byte is
 * given (no link followed, a regular file, the load's inode and size, and its sha256 unless the
 * change time the load kept is unchanged), then that same
 * descriptor read in 512 KiB chunks and hashed again, its last read held back until the whole
 * is known to be the same; and its file closed however it ends.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { DocumentChangedError } from '../../src/errors.js';
import { READ_BYTES, verifiedFile, type ExpectedFile } from '../../src/worker/verified-file.js';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
const openFiles = async (): Promise<number> => (await readdir('/proc/self/fd')).length;

/** Every chunk the stream gives, and how it ended (its opening's refusal included). */
async function drain(opening: Promise<Readable>): Promise<{ chunks: Buffer[]; error: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of await opening) chunks.push(chunk as Buffer);
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
    return { path, size: bytes.length, sha256: sha256(bytes), inode: (await stat(path)).ino };
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

  it('refuses a file changed in place before the send without giving a byte, saying nothing was sent', async () => {
    const bytes = randomBytes(READ_BYTES * 2 + 100);
    const expected = await write(bytes);
    bytes[bytes.length - 1] = bytes.at(-1)! ^ 0xff;
    await writeFile(path, bytes);
    const verified = verifiedFile(expected, 'agreementSignatureFiles', 2);
    const { chunks, error } = await drain(verified.open());
    expect(error).toBeInstanceOf(DocumentChangedError);
    expect(error).toBe(verified.changed);
    expect((error as Error).message).toMatch(
      /^agreementSignatureFiles: file 2 changed on disk after the load \(its sha256 .*nothing was sent/,
    );
    expect(chunks).toEqual([]);
  });

  it('streams a file whose change time is the load’s at once, its one hash as it streams: no whole read before the first byte', async () => {
    const bytes = randomBytes(READ_BYTES * 3 + 100);
    const expected = await write(bytes);
    const { ctimeMs } = await stat(path);
    // A sha256 that is not the file's: a check before the first byte would send nothing; the
    // change time says no write came since the load, so the stream's own hash is the check.
    const verified = verifiedFile({ ...expected, sha256: sha256(Buffer.from('other')), changedAtMs: ctimeMs }, 'agreementFile');
    const { chunks, error } = await drain(verified.open());
    expect(error).toBeInstanceOf(DocumentChangedError);
    expect((error as Error).message).toMatch(/part of it was sent, never a whole content/);
    expect(total(chunks)).toBe(READ_BYTES * 3);
    // The right sha256 with the same change time: the whole file, as on disk.
    const whole = await drain(verifiedFile({ ...expected, changedAtMs: ctimeMs }, 'agreementFile').open());
    expect(whole.error).toBeUndefined();
    expect(Buffer.concat(whole.chunks).equals(bytes)).toBe(true);
  });

  it('hashes a file whose change time moved since the load before its first byte: changed, nothing sent; only touched, sent whole', async () => {
    const bytes = randomBytes(READ_BYTES * 2 + 100);
    const expected = await write(bytes);
    // The load's settled change time, seconds before the writes below.
    const loaded = { ...expected, changedAtMs: (await stat(path)).ctimeMs - 5_000 };
    const touched = await drain(verifiedFile(loaded, 'agreementFile').open());
    expect(touched.error).toBeUndefined();
    expect(Buffer.concat(touched.chunks).equals(bytes)).toBe(true);
    const changed = Buffer.from(bytes);
    changed[0] = changed[0]! ^ 0xff;
    await writeFile(path, changed);
    const refused = await drain(verifiedFile(loaded, 'agreementFile').open());
    expect((refused.error as Error).message).toMatch(/\(its sha256 is not what the load saw\); nothing was sent/);
    expect(refused.chunks).toEqual([]);
  });

  it('holds its last read back from a file changed in place while it streams, and says part of it was sent', async () => {
    const bytes = randomBytes(READ_BYTES * 3 + 100);
    const expected = await write(bytes);
    const verified = verifiedFile(expected, 'agreementFile');
    const stream = await verified.open();
    // Checked: now the same inode's last bytes change under the stream.
    const changed = Buffer.from(bytes);
    changed[changed.length - 1] = changed.at(-1)! ^ 0xff;
    await writeFile(path, changed);
    const { chunks, error } = await drain(Promise.resolve(stream));
    expect(error).toBeInstanceOf(DocumentChangedError);
    expect((error as Error).message).toMatch(/\(its sha256 is not what the load saw\); part of it was sent, never a whole content/);
    // The gateway waits for Content-Length bytes: it never has the whole (changed) content.
    expect(total(chunks)).toBe(READ_BYTES * 3);
  });

  it('refuses a file swapped for a link to a file outside the folder before the first byte, whatever the link leads to', async () => {
    const bytes = randomBytes(2 * 1024 * 1024);
    const expected = await write(bytes);
    const outside = await mkdtemp(join(tmpdir(), 'realty-outside-'));
    try {
      // The same bytes outside: only the link itself gives the swap away.
      await writeFile(join(outside, 'secret'), bytes);
      await rm(path);
      await symlink(join(outside, 'secret'), path);
      const verified = verifiedFile(expected, 'agreementFile');
      const { chunks, error } = await drain(verified.open());
      expect(error).toBeInstanceOf(DocumentChangedError);
      expect((error as Error).message).toMatch(/another file or a link stands in its place\); nothing was sent for this row/);
      expect(chunks).toEqual([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('refuses another file put at its name (its inode is not the load’s), even with the same bytes', async () => {
    const bytes = randomBytes(10_000);
    const expected = await write(bytes);
    await writeFile(join(dir, 'other'), bytes);
    await rename(join(dir, 'other'), path);
    const { chunks, error } = await drain(verifiedFile(expected, 'agreementFile').open());
    expect((error as Error).message).toMatch(/another file or a link stands in its place/);
    expect(chunks).toEqual([]);
  });

  it('refuses a FIFO put at its name at once, without waiting for a writer, and leaves no descriptor open', async () => {
    const expected = await write(randomBytes(100));
    await rm(path);
    execFileSync('mkfifo', [path]);
    const before = await openFiles();
    const verified = verifiedFile(expected, 'agreementFile');
    const { chunks, error } = await drain(verified.open());
    expect(error).toBeInstanceOf(DocumentChangedError);
    expect((error as Error).message).toMatch(/it is no longer a regular file: a pipe, a device or a folder/);
    expect(chunks).toEqual([]);
    expect(await openFiles()).toBe(before);
  });

  it('fails a file that grew or shrank since the load before giving a byte', async () => {
    const bytes = randomBytes(READ_BYTES * 3);
    const grown = { ...(await write(bytes)), size: READ_BYTES * 2 - 10 };
    const first = await drain(verifiedFile(grown, 'agreementFile').open());
    expect((first.error as Error).message).toMatch(/\(its size is not what the load saw\); nothing was sent/);
    expect(first.chunks).toEqual([]);
    const shrunk = { ...grown, size: bytes.length + 1 };
    expect(((await drain(verifiedFile(shrunk, 'agreementFile').open())).error as Error).message).toMatch(/its size is not/);
  });

  it('says a deleted file, or a folder where the file was, can no longer be read or is no regular file', async () => {
    const expected = await write(randomBytes(100));
    await rm(path);
    const deleted = verifiedFile(expected, 'agreementFile');
    expect(((await drain(deleted.open())).error as Error).message).toMatch(/\(it can no longer be read/);
    expect(deleted.changed).toBeInstanceOf(DocumentChangedError);
    await mkdir(path);
    const folder = verifiedFile(expected, 'agreementFile');
    expect(((await drain(folder.open())).error as Error).message).toMatch(/no longer a regular file/);
  });

  it('opens the file anew for each stream, and closes it when a stream is destroyed half-way', async () => {
    const bytes = randomBytes(READ_BYTES * 4);
    const verified = verifiedFile(await write(bytes), 'agreementFile');
    const before = await openFiles();
    const stream = await verified.open();
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

/**
 * Files the tool reads that others put there (src/files/regular-file.ts): no link followed, no
 * wait on a pipe, nothing but a regular file, and every read bounded by a deadline.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileRefusedError, openRegularFile, RegularFile } from '../../src/files/regular-file.js';

describe('openRegularFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-regular-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a regular file whole through its descriptor, and closes it', async () => {
    await writeFile(join(dir, 'a'), 'hello');
    const file = await openRegularFile(join(dir, 'a'));
    expect(file.stats.size).toBe(5);
    expect((await file.readWhole(10)).toString()).toBe('hello');
    await file.close();
  });

  it('refuses a link at the name, a FIFO (at once, with no writer), and a folder', async () => {
    await writeFile(join(dir, 'a'), 'x');
    await symlink(join(dir, 'a'), join(dir, 'link'));
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    await expect(openRegularFile(join(dir, 'link'), { name: 'link' })).rejects.toMatchObject({ reason: 'link' });
    await expect(openRegularFile(join(dir, 'fifo'), { name: 'fifo' })).rejects.toThrow('fifo is not a regular file');
    await expect(openRegularFile(dir)).rejects.toBeInstanceOf(FileRefusedError);
  });

  it('refuses a file past the limit readWhole is given', async () => {
    await writeFile(join(dir, 'big'), Buffer.alloc(2000));
    const file = await openRegularFile(join(dir, 'big'), { name: 'big' });
    await expect(file.readWhole(1000)).rejects.toMatchObject({ reason: 'too-large' });
    await file.close();
  });

  it('gives up on a read that does not answer within its deadline, and closes the descriptor once the read ends', async () => {
    // A pipe opened read-write without O_NONBLOCK: a read waits for a byte that does not come.
    execFileSync('mkfifo', [join(dir, 'stuck')]);
    const fd = openSync(join(dir, 'stuck'), constants.O_RDWR);
    const writer = openSync(join(dir, 'stuck'), constants.O_RDWR);
    const file = new RegularFile(fd, fstatSync(fd), 'stuck', 200);
    try {
      await expect(file.read(Buffer.alloc(10), null)).rejects.toThrow('stuck did not answer a read within 1 s');
      // close() does not wait for the stuck read; the descriptor stays open until it ends.
      await file.close();
      expect(() => fstatSync(fd)).not.toThrow();
    } finally {
      // The byte that lets the read (and so the thread) go.
      writeSync(writer, 'x');
      closeSync(writer);
    }
    await expect
      .poll(() => {
        try {
          fstatSync(fd);
          return 'open';
        } catch {
          return 'closed';
        }
      })
      .toBe('closed');
  });
});

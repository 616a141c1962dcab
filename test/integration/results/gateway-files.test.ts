/**
 * Files between this host and the gateway (issue 39, points 4 and 8): an upload whose file was
 * swapped after the load makes no request at all (the check comes before the first byte), and
 * a download past the cap is refused in one sentence with nothing of it kept. Against a local
 * HTTP server that counts what it receives and serves what the sandbox never would (a body
 * larger than the cap), as client.test.ts's trickling server does.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import { DocumentChangedError } from '../../../src/errors.js';
import { createRealtyClient, DownloadTooLargeError, MAX_DOWNLOAD_BYTES, type RealtyClient } from '../../../src/realty/client.js';
import { ownFolder, saveDocflowFile } from '../../../src/results/docflow-files.js';
import { verifiedFile } from '../../../src/worker/verified-file.js';
import { harness } from '../../helpers/harness.js';

// A folder for each test.
const it = harness({ label: 'gw-files' });

describe('files between this host and the gateway', () => {
  let server: Server;
  let client: RealtyClient;
  /** What the server received: requests and body bytes. */
  const received = { requests: 0, bytes: 0 };
  /** What it answers a file download with: its length and whether it announces it. */
  let download = { bytes: 0, announce: true };

  beforeEach(async () => {
    received.requests = 0;
    received.bytes = 0;
    server = createServer((req, res) => {
      received.requests++;
      req.on('data', (chunk: Buffer) => (received.bytes += chunk.length));
      req.on('end', () => {
        if (req.url?.includes('/files/')) {
          res.writeHead(200, {
            'content-type': 'application/pdf',
            ...(download.announce && { 'content-length': String(download.bytes) }),
          });
          const chunk = Buffer.alloc(64 * 1024, 0x25);
          let left = download.bytes;
          const pump = (): void => {
            while (left > 0) {
              const n = Math.min(left, chunk.length);
              left -= n;
              if (!res.write(chunk.subarray(0, n))) return void res.once('drain', pump);
            }
            res.end();
          };
          res.on('error', () => undefined);
          pump();
          return;
        }
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'c-1', contentLink: '/contents/c-1' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = createRealtyClient({ baseUrl: `http://127.0.0.1:${port}`, sessionId: 's', timeoutMs: 10_000, maxDownloadBytes: 1024 * 1024 });
  });
  afterEach(async () => {
    await client.close().catch(() => undefined);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends not one byte, nor a request, of an agreement swapped for a link to a file outside its folder after the load', async ({
    dir,
  }) => {
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(2 * 1024 * 1024)]);
    const path = join(dir, 'agreement.pdf');
    await writeFile(path, bytes);
    const expected = { path, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), inode: (await stat(path)).ino };
    // Checked: the same file goes up whole.
    const good = verifiedFile(expected, 'agreementFile');
    expect(await client.uploadContent(() => good.open(), 'application/pdf', bytes.length)).toMatchObject({ id: 'c-1' });
    expect(received).toEqual({ requests: 1, bytes: bytes.length });

    // Swapped: a link to a 2 MB file elsewhere (the case streamed 2 MB of it before failing).
    const outside = join(dir, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret'), Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(2 * 1024 * 1024)]));
    await rm(path);
    await symlink(join(outside, 'secret'), path);
    const swapped = verifiedFile(expected, 'agreementFile');
    const err = await client.uploadContent(() => swapped.open(), 'application/pdf', bytes.length).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DocumentChangedError);
    expect((err as Error).message).toContain('nothing was sent for this row');
    expect(received).toEqual({ requests: 1, bytes: bytes.length });
  });

  it('refuses a download its Content-Length puts past the cap before reading it, and one that only grows past it as it comes, keeping nothing', async ({
    dir,
  }) => {
    expect(MAX_DOWNLOAD_BYTES).toBe(100 * 1024 * 1024);
    const folder = await ownFolder(dir, 'DEAL-1');
    download = { bytes: 1024 * 1024 + 1, announce: true };
    const announced = await saveDocflowFile(client, 'd-1', 'f-1', folder).catch((e: unknown) => e);
    expect(announced).toBeInstanceOf(DownloadTooLargeError);
    expect((announced as Error).message).toBe(
      "The gateway's file f-1 is larger than 1 MiB, the most a download takes, so it was not kept.",
    );
    download = { bytes: 3 * 1024 * 1024, announce: false };
    const grown = await saveDocflowFile(client, 'd-1', 'f-1', folder).catch((e: unknown) => e);
    expect(grown).toBeInstanceOf(DownloadTooLargeError);
    expect(await readdir(folder.path)).toEqual([]);
    // Under the cap: kept whole, 0600.
    download = { bytes: 1024 * 1024, announce: false };
    const saved = await saveDocflowFile(client, 'd-1', 'f-1', folder);
    expect(saved).toMatchObject({ name: 'f-1.pdf', bytes: 1024 * 1024 });
    expect((await stat(join(folder.path, 'f-1.pdf'))).mode & 0o777).toBe(0o600);
  });

  it('refuses a deal folder that is a link to a folder elsewhere, writing nothing through it', async ({ dir }) => {
    const elsewhere = join(dir, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(join(dir, 'out'));
    await symlink(elsewhere, join(dir, 'out', 'DEAL-1'));
    await expect(ownFolder(join(dir, 'out'), 'DEAL-1')).rejects.toThrow(
      `${join(dir, 'out', 'DEAL-1')} is not a folder (a link or a file stands there), so nothing is written through it: remove it and run again.`,
    );
    expect(await readdir(elsewhere)).toEqual([]);
  });
});

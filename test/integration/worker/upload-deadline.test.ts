/**
 * An upload's deadline covers its whole body (undici's own timers do not count the time a body
 * takes to send), so a file upload gets `--timeout-ms` plus the time its bytes take at the
 * slowest link given for: a body that takes longer than `--timeout-ms` to send still goes up.
 * Against the real sandbox.
 */
import { Readable } from 'node:stream';
import { describe, expect } from 'vitest';
import { TUNABLES } from '../../../src/config.js';
import { ApiNetworkError } from '../../../src/errors.js';
import { createRealtyClient } from '../../../src/realty/client.js';
import { uploadTimeoutMs } from '../../../src/worker/upload-documents.js';
import { harness } from '../../helpers/harness.js';

/** A PDF's 1.2 MB, sent in 6 chunks 150 ms apart: about 0.9 s of body (1.3 MB/s, well above the deadline's floor). */
const CHUNKS = 6;
const slowBody = (): Readable =>
  Readable.from(
    (async function* () {
      for (let i = 0; i < CHUNKS; i++) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        yield Buffer.alloc(200_000, i === 0 ? '%PDF-' : ' ');
      }
    })(),
    { objectMode: false },
  );

// One sandbox for the file's tests, as before: the second test reads its counts from zero (the first makes no call).
const it = harness({ per: 'file' });

describe('the deadline of an upload', () => {
  it('gives a file the call timeout plus a second per uploadFloorBytesPerSecond bytes', () => {
    const floor = TUNABLES.uploadFloorBytesPerSecond;
    expect(uploadTimeoutMs(30_000, 0)).toBe(30_000);
    expect(uploadTimeoutMs(30_000, floor)).toBe(31_000);
    expect(uploadTimeoutMs(30_000, 50 * 1024 * 1024)).toBe(30_000 + Math.ceil((50 * 1024 * 1024 * 1000) / floor));
  });

  it('fails a body slower than the call timeout at that timeout, and sends it whole within the upload deadline given', async ({
    sandbox,
  }) => {
    const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: 's', timeoutMs: 300 });
    try {
      const late = await client.uploadContent(slowBody, 'application/pdf', CHUNKS * 200_000).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(ApiNetworkError);
      expect((late as ApiNetworkError).reason).toBe('TIMEOUT');
      expect(sandbox.stats().contents.uploads).toBe(0);
      const pointer = await client.uploadContent(slowBody, 'application/pdf', CHUNKS * 200_000, {
        timeoutMs: uploadTimeoutMs(300, CHUNKS * 200_000),
      });
      expect(pointer.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(sandbox.stats().contents).toMatchObject({ uploads: 1, bytes: CHUNKS * 200_000 });
    } finally {
      await client.close();
    }
  });
});

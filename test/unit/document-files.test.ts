import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it, expect, vi } from 'vitest';
import { NOT_A_SIGNATURE } from '../../src/files/detached-signature.js';
import { CHANGE_TIME_SETTLED_MS, settledChangeTimeMs } from '../../src/files/regular-file.js';
import type { Deal } from '../../src/domain/deal.js';
import { agreementType, createDocumentFileChecker } from '../../src/input/document-files.js';
import { ROOT } from '../helpers/cli.js';

const SIGNING = join(ROOT, 'test', 'fixtures', 'signing');

describe('agreementType', () => {
  it('tells a PDF by %PDF-, XML by its first tag (after a BOM and blanks), and nothing else', () => {
    expect(agreementType(Buffer.from('%PDF-1.7\n'))).toBe('pdf');
    expect(agreementType(Buffer.from('<?xml version="1.0"?><a/>'))).toBe('xml');
    expect(agreementType(Buffer.from('\uFEFF\n  <Agreement>'))).toBe('xml');
    expect(agreementType(Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'))).toBeUndefined();
    expect(agreementType(Buffer.from('%PDF'))).toBeUndefined();
    expect(agreementType(Buffer.from('< not a tag'))).toBeUndefined();
  });
});

describe('the load’s checks of the files a row names', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'realty-docfiles-'));
    await copyFile(join(SIGNING, 'agreement.pdf'), join(dir, 'agreement.pdf'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A deal as the validator gives it: only the files' paths. */
  const dealWith = (signatureFiles: string[]): Deal =>
    ({
      agreement: { signatureIds: [], file: { path: 'agreement.pdf' }, signatureFiles: signatureFiles.map((path) => ({ path })) },
    }) as unknown as Deal;

  it('takes real detached signatures, CMS or OpenPGP, with their Content-Type, and keeps each file’s inode', async () => {
    for (const name of ['agreement.pdf.sig', 'agreement.pdf.pem.sig', 'agreement.pdf.asc'])
      await copyFile(join(SIGNING, name), join(dir, name));
    const deal = dealWith(['agreement.pdf.sig', 'agreement.pdf.pem.sig', 'agreement.pdf.asc']);
    expect(await createDocumentFileChecker({ baseDir: dir })(deal)).toEqual([]);
    expect(deal.agreement!.signatureFiles!.map((f) => f.contentType)).toEqual([
      'application/x-pkcs7-signature',
      'application/x-pkcs7-signature',
      'application/pgp-signature',
    ]);
    expect(deal.agreement!.file!.inode).toBe((await stat(join(dir, 'agreement.pdf'))).ino);
    expect(deal.agreement!.signatureFiles![0]!.inode).toBe((await stat(join(dir, 'agreement.pdf.sig'))).ino);
  });

  it('refuses as a signature a text file, the agreement itself, a .env, and more than 1 MiB, naming the file by its number', async () => {
    await writeFile(join(dir, 'text.sig'), 'sample detached signature of agreement-a.pdf (not a real one)\n');
    await writeFile(join(dir, '.env'), 'REALTY_SESSION_ID=secret\n');
    await writeFile(join(dir, 'huge.sig'), Buffer.concat([readFileSync(join(SIGNING, 'agreement.pdf.sig')), Buffer.alloc(1024 * 1024)]));
    const problems = await createDocumentFileChecker({ baseDir: dir })(dealWith(['text.sig', 'agreement.pdf', '.env', 'huge.sig']));
    expect(problems).toEqual([
      { field: 'agreementSignatureFiles', message: `file 1 ${NOT_A_SIGNATURE}` },
      { field: 'agreementSignatureFiles', message: `file 2 ${NOT_A_SIGNATURE}` },
      { field: 'agreementSignatureFiles', message: `file 3 ${NOT_A_SIGNATURE}` },
      { field: 'agreementSignatureFiles', message: 'file 4 is over 1 MiB, more than a detached signature holds' },
    ]);
    // Nothing of a file's bytes or path in a message.
    expect(JSON.stringify(problems)).not.toMatch(/secret|text\.sig|\.env/);
  });

  it('refuses a FIFO named as a file at once, without waiting for a writer', async () => {
    execFileSync('mkfifo', [join(dir, 'pipe.sig')]);
    const problems = await createDocumentFileChecker({ baseDir: dir })(dealWith(['pipe.sig']));
    expect(problems).toEqual([{ field: 'agreementSignatureFiles', message: 'file 1 is not a regular file' }]);
  });

  it('keeps a file’s change time once it has settled, and none for a file changed just before the load', async () => {
    // Copied in beforeEach, a moment ago: a write in the same clock tick could keep its ctime.
    const fresh = dealWith([]);
    expect(await createDocumentFileChecker({ baseDir: dir })(fresh)).toEqual([]);
    expect(fresh.agreement!.file!.changedAtMs).toBeUndefined();
    // The repository's fixture, as a night's files: put there long before (waited for, if not).
    const fixture = join(SIGNING, 'agreement.pdf');
    await vi.waitFor(async () => expect(Date.now() - (await stat(fixture)).ctimeMs).toBeGreaterThanOrEqual(CHANGE_TIME_SETTLED_MS), {
      timeout: CHANGE_TIME_SETTLED_MS * 3,
      interval: 100,
    });
    const settled = dealWith([]);
    expect(await createDocumentFileChecker({ baseDir: SIGNING })(settled)).toEqual([]);
    expect(settled.agreement!.file!.changedAtMs).toBe((await stat(fixture)).ctimeMs);
  });
});

describe('settledChangeTimeMs', () => {
  it('gives the change time only when it is CHANGE_TIME_SETTLED_MS or more before the read', () => {
    expect(CHANGE_TIME_SETTLED_MS).toBe(2_000);
    expect(settledChangeTimeMs({ ctimeMs: 1_000.25 }, 3_000.25)).toBe(1_000.25);
    expect(settledChangeTimeMs({ ctimeMs: 1_000.25 }, 3_000.24)).toBeUndefined();
    // A share whose clock is ahead of this host's: a change time "in the future" is not settled.
    expect(settledChangeTimeMs({ ctimeMs: 10_000 }, 3_000)).toBeUndefined();
  });
});

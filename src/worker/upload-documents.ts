/**
 * The step before the claim of a row that named files (`agreementFile`,
 * `agreementSignatureFiles`): each file goes up through `POST /contents` once a batch, by its
 * sha256 (content-store.ts), streamed from disk, and the docflow then names the content ids.
 * A crash after an upload leaves its id in Redis: the next run of the row uses it. Failures
 * take creation's policy (deal/gateway-failure.ts), but an upload never made a docflow: never uncertain.
 * Each file is checked against the inode, size and change time (or, when that moved or the load
 * kept none, the sha256) the load saw before its first byte leaves, then that same descriptor is
 * streamed and hashed (verified-file.ts): a file
 * changed or swapped since ends the row `invalid` (DOCUMENT_CHANGED), its upload is not
 * remembered, and no docflow is made. A 401 during an upload renews the
 * session and sends the file again, opened anew, without spending a try (client.ts).
 */
import { randomUUID } from 'node:crypto';
import { TUNABLES } from '../config.js';
import type { DocumentFile, RowDocument } from '../domain/deal.js';
import { rowDocuments } from '../docflows/registry.js';
import type { DealRun } from './deal/run.js';
import { verifiedFile } from './verified-file.js';

/** Nothing to say (the ids are in run.uploaded), a file another worker is uploading, or the failure (deal/steps.ts decides). */
export type UploadStep = undefined | { kind: 'delay'; ms: number } | { kind: 'error'; error: unknown };

/**
 * An upload's deadline (ms): the call's `--timeout-ms` plus the time the file's bytes take at
 * the slowest link given for (TUNABLES.uploadFloorBytesPerSecond): the one deadline covers the body.
 */
export function uploadTimeoutMs(timeoutMs: number, bytes: number): number {
  return timeoutMs + Math.ceil((bytes * 1000) / TUNABLES.uploadFloorBytesPerSecond);
}

/** A file another worker is uploading: this row looks again after about this long, no try spent. */
export const UPLOAD_WAIT_MS = 500;

/** The row's content ids (run.uploaded), or what to do instead. Nothing for a row of content ids. */
export async function uploadDocuments(run: DealRun): Promise<UploadStep> {
  if (!run.deal || run.exhausted) return undefined;
  const uploaded: NonNullable<DealRun['uploaded']> = [];
  const attorney = attorneyFile(run);
  for (const { document, fileField, signatureField } of [...rowDocuments(run.deal), ...(attorney ? [attorney] : [])]) {
    if (!document.file) {
      uploaded.push({ contentId: document.contentId ?? '', signatureIds: document.signatureIds });
      continue;
    }
    const ids: string[] = [];
    for (const [i, file] of [document.file, ...(document.signatureFiles ?? [])].entries()) {
      const id = await uploadOnce(run, file, i === 0 ? [fileField] : [signatureField, i]);
      if (typeof id !== 'string') return id;
      ids.push(id);
    }
    uploaded.push({ contentId: ids[0]!, signatureIds: ids.slice(1) });
  }
  // The power of attorney's ids come last: the row's documents keep their places.
  if (attorney) run.uploadedAttorney = uploaded.pop();
  run.uploaded = uploaded;
  return undefined;
}

/** The profile's power of attorney, when the run's type sends it and the profile names it by file (load-batch.ts checked it). */
export function attorneyFile(run: DealRun): RowDocument | undefined {
  const attorney = run.profile?.representative.attorney;
  if (!run.kind.attorney || !attorney?.file) return undefined;
  return { document: attorney, fileField: 'representative.attorney.file', signatureField: 'representative.attorney.signatureFiles' };
}

/** `which`: the field the file is named by (and the signature file's 1-based number), for a DOCUMENT_CHANGED. */
async function uploadOnce(run: DealRun, file: DocumentFile, which: [string] | [string, number]): Promise<string | NonNullable<UploadStep>> {
  const { ctx, batch } = run;
  const store = ctx.contents;
  const { sha256, contentType, size } = file;
  if (!store || !sha256 || !contentType || size === undefined || file.inode === undefined)
    return { kind: 'error', error: new Error('the row names a file the load did not check; load the batch again') };
  let token: string | undefined;
  try {
    const known = await store.known(batch, sha256);
    if (known) return known;
    token = randomUUID();
    const timeoutMs = uploadTimeoutMs(ctx.timeoutMs, size);
    // Twice the upload's deadline: a worker that died mid-upload lets go of it by then.
    if (!(await store.claim(batch, sha256, token, 2 * timeoutMs))) {
      token = undefined;
      return { kind: 'delay', ms: UPLOAD_WAIT_MS + Math.round(Math.random() * UPLOAD_WAIT_MS) };
    }
    await ctx.throttle?.();
    const verified = verifiedFile({ path: file.path, size, sha256, inode: file.inode, changedAtMs: file.changedAtMs }, which[0], which[1]);
    let pointer: Awaited<ReturnType<typeof ctx.client.uploadContent>>;
    try {
      pointer = await ctx.client.uploadContent(() => verified.open(), contentType, size, { timeoutMs });
    } catch (err) {
      throw verified.changed ?? err;
    }
    // Never remembered as these bytes' upload (a file found changed before the send sent
    // nothing; one changed while it streamed held its last bytes back, so the gateway should
    // have made no content of it; one it made anyway is left unnamed).
    if (verified.changed) throw verified.changed;
    await store.remember(batch, sha256, pointer.id, token);
    token = undefined;
    run.log().info({ sha256, bytes: size, contentId: pointer.id }, 'file uploaded');
    return pointer.id;
  } catch (err) {
    if (token) await store.release(batch, sha256, token).catch(() => undefined);
    return { kind: 'error', error: err };
  }
}

/**
 * The step before the claim of a row that named files (`agreementFile`,
 * `agreementSignatureFiles`): each file goes up through `POST /contents` once a batch, by its
 * sha256 (content-store.ts), streamed from disk, and the docflow then names the content ids.
 * A crash after an upload leaves its id in Redis: the next run of the row uses it. Failures
 * take creation's policy (decide.ts), but an upload never made a docflow: never uncertain.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { DocumentFile } from '../input/deal.js';
import type { DealRun } from './deal-run.js';

/** Nothing to say (the ids are in run.uploaded), a file another worker is uploading, or the failure (deal-steps.ts decides). */
export type UploadStep = undefined | { kind: 'delay'; ms: number } | { kind: 'error'; error: unknown };

/** A file another worker is uploading: this row looks again after about this long, no try spent. */
export const UPLOAD_WAIT_MS = 500;

/** The row's content ids (run.uploaded), or what to do instead. Nothing for a row of content ids. */
export async function uploadDocuments(run: DealRun): Promise<UploadStep> {
  const agreement = run.deal?.agreement;
  if (!agreement?.file || run.exhausted) return undefined;
  const ids: string[] = [];
  for (const file of [agreement.file, ...(agreement.signatureFiles ?? [])]) {
    const id = await uploadOnce(run, file);
    if (typeof id !== 'string') return id;
    ids.push(id);
  }
  run.uploaded = { contentId: ids[0]!, signatureIds: ids.slice(1) };
  return undefined;
}

async function uploadOnce(run: DealRun, file: DocumentFile): Promise<string | NonNullable<UploadStep>> {
  const { ctx, batch } = run;
  const store = ctx.contents;
  const { sha256, contentType, size } = file;
  if (!store || !sha256 || !contentType || size === undefined)
    return { kind: 'error', error: new Error('the row names a file the load did not check; load the batch again') };
  let token: string | undefined;
  try {
    const known = await store.known(batch, sha256);
    if (known) return known;
    token = randomUUID();
    // Twice the call's timeout: a worker that died mid-upload lets go of it by then.
    if (!(await store.claim(batch, sha256, token, 2 * ctx.timeoutMs))) {
      token = undefined;
      return { kind: 'delay', ms: UPLOAD_WAIT_MS + Math.round(Math.random() * UPLOAD_WAIT_MS) };
    }
    await ctx.throttle?.();
    const pointer = await ctx.client.uploadContent(createReadStream(file.path), contentType, size);
    await store.remember(batch, sha256, pointer.id, token);
    token = undefined;
    run.log().info({ sha256, bytes: size, contentId: pointer.id }, 'file uploaded');
    return pointer.id;
  } catch (err) {
    if (token) await store.release(batch, sha256, token).catch(() => undefined);
    return { kind: 'error', error: err };
  }
}

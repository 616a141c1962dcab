/**
 * `realty-batch to-sign <batch> --dir <d>`: every application file a suspended docflow of
 * the batch waits to have signed, to `<d>/<dealId>/<fileId>.<ext>`, with `<d>/manifest.csv`
 * (dealId, docflowId, signer, role, fileId, file, bytes, sha256). The signer is initials
 * only: the gateway's person, full or masked, never reaches the folder.
 *
 * Which docflows: the batch's rows whose docflow the news feed last showed `suspended` on
 * a `signature` requirement (a row created 201 that the feed has not shown yet counts too);
 * the requirement itself is read fresh (`GET /docflows/{id}`): a docflow that no longer
 * waits for signatures is said and left alone. Run again, it asks nothing for a file the
 * manifest lists and the folder holds at its size (a file the bank changed stays as it is:
 * `sign` refuses it by its sha256); what is missing is downloaded whole (docflow-files.ts).
 * A deal's folder that is a link (or a file) is refused, never written through; the files and
 * the manifest are created 0600.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SessionRefusedError } from '../errors.js';
import { PRIVATE_FILE_MODE, writeFileAtomically } from '../files/atomic-file.js';
import { personInitials } from '../feed/item-status.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';
import { SUBMITTED_OUTCOMES } from '../domain/outcome.js';
import { withGatewayRetry } from '../realty/gateway-retry.js';
import type { Docflow } from '../domain/gateway.js';
import type { Database } from '../db/database.js';
import { duplicateDocflowIds } from '../db/duplicates.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';
import {
  csvText,
  eachLimit,
  ownFolder,
  readCsvLines,
  type BatchFilesOptions,
  safeName,
  saveDocflowFile,
  sizeOf,
  writeManifestCopy,
} from './docflow-files.js';

export const SIGN_MANIFEST = 'manifest.csv';
export const SIGN_MANIFEST_COLUMNS = ['dealId', 'docflowId', 'signer', 'role', 'fileId', 'file', 'bytes', 'sha256'] as const;
export type SignManifestLine = Record<(typeof SIGN_MANIFEST_COLUMNS)[number], string>;

export type SigningOptions = BatchFilesOptions;

/** One deal that could not be handled, or no longer needs to be: why, in one sentence. */
export interface DealNote {
  dealId: string;
  docflowId: string;
  reason: string;
}

export interface ToSignSummary {
  /** Docflows of the batch waiting for signatures, as the feed last showed them. */
  docflows: number;
  downloaded: number;
  /** Files already in the folder at the size the manifest lists. */
  skipped: number;
  /** Docflows the gateway no longer shows waiting for signatures. */
  passed: DealNote[];
  /** Docflows whose files could not all be had. */
  failed: DealNote[];
  manifest: string;
}

const key = (docflowId: string, fileId: string) => `${docflowId}/${fileId}`;

/**
 * The batch's docflows (docflowId → its deal and whether it waits for signatures, as the
 * feed last showed it), in input order, each once: rows of one deal share it.
 */
export async function batchDocflows(
  redis: Redis,
  keys: Keys,
  db: Database,
  batch: string,
  total: number,
): Promise<Map<string, { dealId: string; waitsForSignature: boolean }>> {
  const docflows = new Map<string, { dealId: string; waitsForSignature: boolean }>();
  for await (const record of batchOutcomes(redis, keys, db, batch, total, { states: true })) {
    if (!SUBMITTED_OUTCOMES.has(record.outcome) || !record.docflowId || docflows.has(record.docflowId)) continue;
    docflows.set(record.docflowId, {
      dealId: record.dealId,
      waitsForSignature: record.state === 'suspended' && record.requirement === 'signature',
    });
  }
  return docflows;
}

/** The files a docflow waits to have signed, each with its signer; none when it no longer waits for signatures. */
export function filesToSign(docflow: Docflow): Array<{ fileId: string; signer: string; role: string }> {
  if (docflow.state !== 'suspended') return [];
  const files: Array<{ fileId: string; signer: string; role: string }> = [];
  for (const requirement of docflow.requirements?.signature ?? []) {
    const role = typeof requirement.role === 'string' ? requirement.role : '';
    const signer = personInitials(requirement.person) ?? '';
    for (const file of requirement.files) files.push({ fileId: file.id, signer, role });
  }
  return files;
}

/** Why a deal's second docflow is left unsigned, and what to do with it. */
export function duplicateUnsigned(batch: string): string {
  return `a second docflow of the deal (DUPLICATE_DOCFLOW): never signed, so it never reaches the registry; nothing else is needed (realty-batch cancel ${batch} --duplicates reports it)`;
}

export async function readSignManifest(path: string): Promise<Map<string, SignManifestLine>> {
  const lines = new Map<string, SignManifestLine>();
  for (const line of await readCsvLines<SignManifestLine>(path)) if (line.fileId) lines.set(key(line.docflowId, line.fileId), line);
  return lines;
}

export async function downloadToSign(options: SigningOptions): Promise<ToSignSummary> {
  const { dir, client } = options;
  await mkdir(dir, { recursive: true });
  const manifestPath = join(dir, SIGN_MANIFEST);
  const manifest = await readSignManifest(manifestPath);
  const waiting = [...(await batchDocflows(options.redis, options.keys, options.db, options.batch, options.total))].flatMap(
    ([docflowId, d]) => (d.waitsForSignature ? [[docflowId, d.dealId] as const] : []),
  );
  const summary: ToSignSummary = { docflows: waiting.length, downloaded: 0, skipped: 0, passed: [], failed: [], manifest: manifestPath };
  // A deal's second docflow is never signed: signed, it would reach the registry beside the first.
  const duplicates = await duplicateDocflowIds(
    options.db.kysely,
    waiting.map(([docflowId]) => docflowId),
  );
  for (const [docflowId, dealId] of waiting)
    if (duplicates.has(docflowId)) summary.passed.push({ dealId, docflowId, reason: duplicateUnsigned(options.batch) });
  const retry = {
    ...options.retry,
    onRetry: (err: Error) => options.logger?.warn({ err: { message: err.message } }, 'a call is tried again'),
  };

  const fetchOne = async (docflowId: string, dealId: string): Promise<void> => {
    const docflow = await withGatewayRetry(() => client.getDocflow(docflowId), retry);
    const files = filesToSign(docflow);
    if (files.length === 0) {
      summary.passed.push({ dealId, docflowId, reason: `no longer waits for signatures (the gateway shows it ${docflow.state})` });
      return;
    }
    const folder = await ownFolder(dir, safeName(dealId));
    for (const { fileId, signer, role } of files) {
      const listed = manifest.get(key(docflowId, fileId));
      if (listed && (await sizeOf(join(folder.path, listed.file))) === Number(listed.bytes)) {
        summary.skipped++;
        continue;
      }
      const saved = await withGatewayRetry(() => saveDocflowFile(client, docflowId, fileId, folder), retry);
      if (saved === 'kept') continue;
      summary.downloaded++;
      manifest.set(key(docflowId, fileId), {
        dealId,
        docflowId,
        signer,
        role,
        fileId,
        file: saved.name,
        bytes: String(saved.bytes),
        sha256: saved.sha256,
      });
    }
  };

  try {
    await eachLimit(
      waiting.filter(([docflowId]) => !duplicates.has(docflowId)),
      options.concurrency ?? 4,
      async ([docflowId, dealId]) => {
        try {
          await fetchOne(docflowId, dealId);
        } catch (err) {
          if (err instanceof SessionRefusedError) throw err;
          summary.failed.push({ dealId, docflowId, reason: (err as Error).message });
        }
      },
    );
  } finally {
    // What was had is kept, whatever stopped the rest: the next run skips it.
    const lines = [...manifest.values()].sort((a, b) => a.dealId.localeCompare(b.dealId) || a.file.localeCompare(b.file));
    await writeFileAtomically(manifestPath, csvText(lines, SIGN_MANIFEST_COLUMNS), { mode: PRIVATE_FILE_MODE });
    if (options.manifestCopy !== undefined) await writeManifestCopy(options.manifestCopy, lines, SIGN_MANIFEST_COLUMNS);
  }
  return summary;
}

/**
 * `realty-batch documents <batch> --dir <d>`: the registry's result files (the extract and
 * its signatures) of every completed docflow of a batch, to `<d>/<dealId>/<fileId>.<ext>`,
 * with `<d>/manifest.csv` (dealId, docflowId, file, type, bytes, sha256).
 *
 * Each file is streamed to a temporary name beside its place (created 0600, in a deal folder
 * that is no link: docflow-files.ts), hashed on the way, and renamed once whole: a file under
 * its own name is always complete. A file past 100 MiB is refused, nothing of it kept. Run again (after a
 * crash, or the next morning), it asks nothing of the gateway for a docflow whose files the
 * manifest lists and the folder holds at their size, and downloads only what is missing.
 * Calls go through the same retry policy as creation (src/realty/gateway-retry.ts).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_FILE_MODE, writeFileAtomically } from '../files/atomic-file.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';
import { SUBMITTED_OUTCOMES } from '../domain/outcome.js';
import type { RealtyClient } from '../realty/client.js';
import { withGatewayRetry } from '../realty/gateway-retry.js';
import type { Docflow } from '../domain/gateway.js';
import { SessionRefusedError } from '../errors.js';
import {
  csvText,
  eachLimit,
  ownFolder,
  readCsvLines,
  type BatchFilesOptions,
  saveDocflowFile,
  safeName,
  sizeOf,
  writeManifestCopy,
} from './docflow-files.js';

export const MANIFEST = 'manifest.csv';
export const MANIFEST_COLUMNS = ['dealId', 'docflowId', 'file', 'type', 'bytes', 'sha256'] as const;
export type ManifestLine = Record<(typeof MANIFEST_COLUMNS)[number], string>;

export interface DocumentsOptions extends BatchFilesOptions {
  /** After each docflow: how many of `docflows` are done, and the files so far. */
  onProgress?: (progress: { done: number; docflows: number; downloaded: number; skipped: number }) => void;
}

export interface DocumentsSummary {
  /** Completed docflows of the batch. */
  docflows: number;
  downloaded: number;
  /** Files already in the folder at their size. */
  skipped: number;
  bytes: number;
  /** Docflows whose files could not all be had, with why (one sentence each). */
  failed: Array<{ dealId: string; docflowId: string; reason: string }>;
  manifest: string;
}

/** The files of a docflow's result: each result file and each of its signatures. */
function resultFiles(docflow: Docflow): Array<{ id: string; type: string }> {
  const files: Array<{ id: string; type: string }> = [];
  for (const file of docflow.result?.files ?? []) {
    files.push({ id: file.id, type: file.type ?? '' });
    for (const signature of file.signatures ?? []) files.push({ id: signature.id, type: signature.type ?? 'signature' });
  }
  return files;
}

async function readManifest(path: string): Promise<Map<string, ManifestLine>> {
  const lines = new Map<string, ManifestLine>();
  for (const line of await readCsvLines<ManifestLine>(path)) lines.set(`${line.docflowId}/${line.file}`, line);
  return lines;
}

export async function downloadDocuments(options: DocumentsOptions): Promise<DocumentsSummary> {
  const { dir, client } = options;
  await mkdir(dir, { recursive: true });
  const manifestPath = join(dir, MANIFEST);
  const manifest = await readManifest(manifestPath);
  const byDocflow = new Map<string, ManifestLine[]>();
  for (const line of manifest.values()) byDocflow.set(line.docflowId, [...(byDocflow.get(line.docflowId) ?? []), line]);

  // The batch's completed docflows, each once (rows of one deal share it).
  const completed = new Map<string, { dealId: string }>();
  for await (const record of batchOutcomes(options.redis, options.keys, options.db, options.batch, options.total, { states: true })) {
    if (!SUBMITTED_OUTCOMES.has(record.outcome) || !record.docflowId || record.state !== 'completed') continue;
    if (!completed.has(record.docflowId)) completed.set(record.docflowId, { dealId: record.dealId });
  }

  const summary: DocumentsSummary = { docflows: completed.size, downloaded: 0, skipped: 0, bytes: 0, failed: [], manifest: manifestPath };
  let done = 0;
  const progress = () => options.onProgress?.({ done, docflows: completed.size, downloaded: summary.downloaded, skipped: summary.skipped });
  const retry = {
    ...options.retry,
    onRetry: (err: Error) => options.logger?.warn({ err: { message: err.message } }, 'a download is tried again'),
  };

  /** True when the manifest lists files of this docflow and every one is in the folder at its size. */
  const alreadyHere = async (docflowId: string): Promise<boolean> => {
    const lines = byDocflow.get(docflowId);
    if (!lines || lines.length === 0) return false;
    for (const line of lines) if ((await sizeOf(join(dir, safeName(line.dealId), line.file))) !== Number(line.bytes)) return false;
    return true;
  };

  const fetchOne = async (docflowId: string, dealId: string): Promise<void> => {
    if (await alreadyHere(docflowId)) {
      summary.skipped += byDocflow.get(docflowId)!.length;
      return;
    }
    const docflow = await withGatewayRetry(() => client.getDocflow(docflowId), retry);
    const files = resultFiles(docflow);
    if (docflow.state !== 'completed' || files.length === 0) {
      summary.failed.push({ dealId, docflowId, reason: `the gateway shows it ${docflow.state} with ${files.length} result files` });
      return;
    }
    const folder = await ownFolder(dir, safeName(dealId));
    for (const file of files) {
      const line = await withGatewayRetry(() => downloadFile(client, docflowId, file, dealId, folder, manifest), retry);
      if (line === 'skipped') summary.skipped++;
      else {
        summary.downloaded++;
        summary.bytes += Number(line.bytes);
        manifest.set(`${docflowId}/${line.file}`, line);
      }
    }
  };

  try {
    await eachLimit([...completed], options.concurrency ?? 4, async ([docflowId, { dealId }]) => {
      try {
        await fetchOne(docflowId, dealId);
      } catch (err) {
        if (err instanceof SessionRefusedError) throw err;
        summary.failed.push({ dealId, docflowId, reason: (err as Error).message });
      }
      done++;
      progress();
    });
  } finally {
    // What was had is kept, whatever stopped the rest: the next run skips it.
    const lines = [...manifest.values()].sort((a, b) => a.dealId.localeCompare(b.dealId) || a.file.localeCompare(b.file));
    await writeFileAtomically(manifestPath, csvText(lines, MANIFEST_COLUMNS), { mode: PRIVATE_FILE_MODE });
    if (options.manifestCopy !== undefined) await writeManifestCopy(options.manifestCopy, lines, MANIFEST_COLUMNS);
  }
  return summary;
}

/** One file: kept when a file of its name is there at the size the gateway announces (or the manifest lists, when it announces none). */
async function downloadFile(
  client: RealtyClient,
  docflowId: string,
  file: { id: string; type: string },
  dealId: string,
  folder: { path: string; dev: number; ino: number },
  manifest: ReadonlyMap<string, ManifestLine>,
): Promise<ManifestLine | 'skipped'> {
  const saved = await saveDocflowFile(client, docflowId, file.id, folder, (name, had, length) => {
    const listed = manifest.get(`${docflowId}/${name}`);
    return had !== undefined && (had === length || (length === undefined && listed !== undefined && Number(listed.bytes) === had));
  });
  if (saved === 'kept') return 'skipped';
  return { dealId, docflowId, file: saved.name, type: file.type, bytes: String(saved.bytes), sha256: saved.sha256 };
}

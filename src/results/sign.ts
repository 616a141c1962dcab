/**
 * `realty-batch sign <batch> --dir <d>`: the bank's detached signatures back to the gateway.
 * For each docflow of the batch that `to-sign` put in `<d>/manifest.csv`, each
 * `<d>/<dealId>/<file>.sig` beside a file it downloaded is attached
 * (`POST /docflows/{id}/files/{fileId}/signatures`), and a docflow whose files are all
 * signed is sent (`POST /docflows/{id}`). Each deal ends with one line: sent, what it still
 * misses, or why it was refused or left alone.
 *
 * Refused, with nothing posted for that deal's docflow: a `.sig` in a deal's folder for a
 * file of another deal (or for no file to-sign wrote), a file whose sha256 is no longer
 * the manifest's (the bank would sign bytes the gateway did not make), and a `.sig` that is
 * no detached signature by its structure (plain text, the PDF itself, over 1 MiB, a link, a
 * pipe: src/files/detached-signature.ts). `signed.csv` is created 0600, its cells defused.
 *
 * Run again (after a crash, or once the last signatures come), it posts nothing twice:
 * each signature attached and each docflow sent is appended to `<d>/signed.csv` as soon as
 * the gateway accepts it, and what is there is not posted again. The one window, a crash
 * between the gateway's 204 and the line's append, posts that one signature again; the
 * gateway takes a repeated signature of a file still waiting for it as the same (the
 * sandbox answers 204 again). A docflow the gateway no longer shows waiting for signatures
 * (sent by someone else, or by a send whose answer was lost) is said and left alone.
 */
import { createHash } from 'node:crypto';
import { appendFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { SessionRefusedError, UsageError } from '../errors.js';
import { PRIVATE_FILE_MODE } from '../files/atomic-file.js';
import { checkDetachedSignature, MAX_SIGNATURE_BYTES, signatureContentType } from '../files/detached-signature.js';
import { FileRefusedError, openRegularFile } from '../files/regular-file.js';
import { maskRegistryText } from '../feed/item-status.js';
import { withGatewayRetry } from '../realty/gateway-retry.js';
import { csvText, eachLimit, readCsvLines, safeName, sha256Of, sizeOf } from './docflow-files.js';
import { duplicateDocflowIds } from '../db/duplicates.js';
import {
  batchDocflows,
  duplicateUnsigned,
  filesToSign,
  readSignManifest,
  SIGN_MANIFEST,
  type SignManifestLine,
  type SigningOptions,
} from './to-sign.js';

export const SIGNED_JOURNAL = 'signed.csv';
export const SIGNED_COLUMNS = ['docflowId', 'dealId', 'fileId', 'what', 'sha256', 'at'] as const;
type SignedLine = Record<(typeof SIGNED_COLUMNS)[number], string>;

export const SIGNATURE_SUFFIX = '.sig';

export type DealSigning =
  | 'sent'
  /** Sent by an earlier run (signed.csv says so): nothing asked of the gateway. */
  | 'already_sent'
  /** The gateway no longer shows it waiting for signatures. */
  | 'passed'
  | 'missing'
  | 'refused'
  | 'failed';

export interface DealSigned {
  dealId: string;
  docflowId: string;
  result: DealSigning;
  /** One sentence: what it still misses, why it was refused or left alone. */
  reason?: string;
}

export interface SignSummary {
  /** Signatures attached by this run. */
  posted: number;
  /** One per docflow of the batch that waits for signatures or that the manifest lists, in the manifest's order. */
  deals: DealSigned[];
  journal: string;
}

/** The `.sig` files of each deal's folder under `dir`: folder → file names. */
async function signatureFiles(dir: string): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const names = (await readdir(join(dir, entry.name), { withFileTypes: true }))
      .filter((f) => f.isFile() && f.name.endsWith(SIGNATURE_SUFFIX) && !f.name.startsWith('.'))
      .map((f) => f.name);
    if (names.length > 0) found.set(entry.name, names);
  }
  return found;
}

/**
 * Why a deal's folder cannot be trusted, in one sentence, when a `.sig` in it is for a
 * file of another deal or for no file to-sign wrote; undefined when every one is its own.
 */
function foreignSignature(folder: string, names: readonly string[], byFile: ReadonlyMap<string, SignManifestLine>): string | undefined {
  for (const name of names) {
    const file = name.slice(0, -SIGNATURE_SUFFIX.length);
    const line = byFile.get(file);
    if (line === undefined) return `${folder}/${name} signs no file that to-sign wrote, so nothing is posted for deal ${folder}.`;
    if (safeName(line.dealId) !== folder)
      return `${folder}/${name} signs ${file}, a file of deal ${line.dealId}, not of deal ${folder}, so nothing is posted for deal ${folder}.`;
  }
  return undefined;
}

/**
 * A `.sig` file's bytes and Content-Type, read through a descriptor opened without following a
 * link or blocking, at most MAX_SIGNATURE_BYTES of it; 'empty'; or why it is no signature (the
 * words after its name). A 300 MB file is refused by its size, never read.
 */
async function readSignature(
  path: string,
  name: string,
): Promise<{ signature: Buffer; contentType: string } | 'empty' | { problem: string }> {
  let file;
  try {
    file = await openRegularFile(path, { name });
  } catch (err) {
    return { problem: err instanceof FileRefusedError ? err.message.slice(name.length + 1) : 'cannot be read' };
  }
  try {
    if (file.stats.size === 0) return 'empty';
    if (file.stats.size > MAX_SIGNATURE_BYTES) return { problem: 'is over 1 MiB, more than a detached signature holds' };
    const signature = await file.readWhole(MAX_SIGNATURE_BYTES);
    const checked = checkDetachedSignature(signature);
    if (!checked.ok) return { problem: checked.problem };
    return { signature, contentType: signatureContentType(checked.kind) };
  } catch (err) {
    return { problem: err instanceof FileRefusedError ? err.message.slice(name.length + 1) : 'cannot be read' };
  } finally {
    await file.close();
  }
}

export async function signDocflows(options: SigningOptions): Promise<SignSummary> {
  const { dir, client } = options;
  const manifestPath = join(dir, SIGN_MANIFEST);
  if ((await sizeOf(manifestPath)) === undefined)
    throw new UsageError(`${manifestPath} does not exist: run realty-batch to-sign ${options.batch} --dir ${dir} first.`);
  const manifest = await readSignManifest(manifestPath);
  const byFile = new Map([...manifest.values()].map((line) => [line.file, line]));
  const journalPath = join(dir, SIGNED_JOURNAL);
  const journal = new Map<string, SignedLine>();
  for (const line of await readCsvLines<SignedLine>(journalPath)) journal.set(`${line.docflowId}/${line.what}/${line.fileId}`, line);
  // Created 0600, as the files it speaks of are.
  if ((await sizeOf(journalPath)) === undefined) await appendFile(journalPath, csvText([], SIGNED_COLUMNS), { mode: PRIVATE_FILE_MODE });
  const note = async (line: Omit<SignedLine, 'at'>): Promise<void> => {
    const full = { ...line, at: new Date().toISOString() };
    // One short line a write, appended: a crash leaves the lines before it whole.
    await appendFile(journalPath, csvText([full], SIGNED_COLUMNS, false), { mode: PRIVATE_FILE_MODE });
    journal.set(`${line.docflowId}/${line.what}/${line.fileId}`, full);
  };

  const folders = await signatureFiles(dir);
  const refusals = new Map<string, string>();
  for (const [folder, names] of folders) {
    const reason = foreignSignature(folder, names, byFile);
    if (reason !== undefined) refusals.set(folder, reason);
  }

  // The batch's docflows: those to-sign wrote down, and those waiting that it did not (yet).
  const ofBatch = await batchDocflows(options.redis, options.keys, options.db, options.batch, options.total);
  const listed = new Map<string, SignManifestLine[]>();
  for (const line of manifest.values())
    if (ofBatch.has(line.docflowId)) listed.set(line.docflowId, [...(listed.get(line.docflowId) ?? []), line]);
  const summary: SignSummary = { posted: 0, deals: [], journal: journalPath };
  // A deal's second docflow is never signed, whatever its folder holds: it would reach the registry beside the first.
  const duplicates = await duplicateDocflowIds(options.db.kysely, [...ofBatch.keys()]);
  for (const [docflowId, { dealId, waitsForSignature }] of ofBatch)
    if (duplicates.has(docflowId) && (waitsForSignature || listed.has(docflowId))) {
      listed.delete(docflowId);
      summary.deals.push({ dealId, docflowId, result: 'passed', reason: `${duplicateUnsigned(options.batch)}: nothing posted` });
    } else if (waitsForSignature && !listed.has(docflowId))
      summary.deals.push({
        dealId,
        docflowId,
        result: 'missing',
        reason: `its files are not downloaded yet: run realty-batch to-sign ${options.batch} --dir ${dir}`,
      });

  const retry = {
    ...options.retry,
    onRetry: (err: Error) => options.logger?.warn({ err: { message: err.message } }, 'a call is tried again'),
  };

  const signOne = async (docflowId: string, lines: SignManifestLine[]): Promise<DealSigned> => {
    const dealId = lines[0]!.dealId;
    const folder = safeName(dealId);
    const refused = refusals.get(folder);
    if (refused !== undefined) return { dealId, docflowId, result: 'refused', reason: refused };
    if (journal.has(`${docflowId}/sent/`)) return { dealId, docflowId, result: 'already_sent' };
    const signatures = new Set(folders.get(folder) ?? []);

    const docflow = await withGatewayRetry(() => client.getDocflow(docflowId), retry);
    const required = filesToSign(docflow);
    if (required.length === 0)
      return {
        dealId,
        docflowId,
        result: 'passed',
        reason: `no longer waits for signatures (the gateway shows it ${docflow.state}): nothing posted`,
      };

    // Every check before the first post: a refused deal gets nothing.
    const toPost: Array<{ fileId: string; line: SignManifestLine; signature: Buffer; contentType: string }> = [];
    const missing: string[] = [];
    for (const { fileId, signer, role } of required) {
      const line = manifest.get(`${docflowId}/${fileId}`);
      const who = [signer, role].filter(Boolean).join(', ');
      if (line === undefined) {
        missing.push(`file ${fileId}${who && ` of ${who}`} is not downloaded (run to-sign again)`);
        continue;
      }
      if (journal.has(`${docflowId}/signature/${fileId}`)) continue;
      if (!signatures.has(`${line.file}${SIGNATURE_SUFFIX}`)) {
        missing.push(`${line.file}${SIGNATURE_SUFFIX}${who && ` (${who})`}`);
        continue;
      }
      const path = join(dir, folder, line.file);
      const refused = (reason: string): DealSigned => ({ dealId, docflowId, result: 'refused', reason });
      if ((await sizeOf(path)) === undefined)
        return refused(
          `${folder}/${line.file} is gone, so its signature cannot be checked against the manifest; nothing is posted for deal ${dealId}.`,
        );
      if ((await sha256Of(path).catch(() => '')) !== line.sha256)
        return refused(
          `${folder}/${line.file} changed after to-sign (its sha256 is not the manifest's), so nothing is posted for deal ${dealId}: delete it, run to-sign again and sign the new copy.`,
        );
      const name = `${folder}/${line.file}${SIGNATURE_SUFFIX}`;
      const read = await readSignature(join(dir, folder, `${line.file}${SIGNATURE_SUFFIX}`), name);
      if (read === 'empty') {
        missing.push(`${line.file}${SIGNATURE_SUFFIX} (empty)`);
        continue;
      }
      if ('problem' in read) return refused(`${name} ${read.problem}, so nothing is posted for deal ${dealId}.`);
      toPost.push({ fileId, line, ...read });
    }

    for (const { fileId, signature, contentType } of toPost) {
      await withGatewayRetry(() => client.signFile(docflowId, fileId, signature, { contentType }), retry);
      summary.posted++;
      await note({ docflowId, dealId, fileId, what: 'signature', sha256: createHash('sha256').update(signature).digest('hex') });
    }
    if (missing.length > 0) return { dealId, docflowId, result: 'missing', reason: `still missing ${missing.join(', ')}` };

    await withGatewayRetry(() => client.sendDocflow(docflowId), retry);
    await note({ docflowId, dealId, fileId: '', what: 'sent', sha256: '' });
    return { dealId, docflowId, result: 'sent' };
  };

  await eachLimit([...listed], options.concurrency ?? 4, async ([docflowId, lines]) => {
    try {
      summary.deals.push(await signOne(docflowId, lines));
    } catch (err) {
      if (err instanceof SessionRefusedError) throw err;
      // The gateway's text may echo a person: masked as a results file's would be.
      summary.deals.push({ dealId: lines[0]!.dealId, docflowId, result: 'failed', reason: maskRegistryText((err as Error).message) });
    }
  });
  summary.deals.sort((a, b) => a.dealId.localeCompare(b.dealId) || a.docflowId.localeCompare(b.docflowId));
  return summary;
}

/**
 * A deal's folder of more documents (`answer --dir <d>`, `<d>/<dealId>/`): each file a PDF or
 * XML with an optional `<file>.sig` beside it, checked as the load checks a row's files
 * (src/input/document-files.ts: a regular file inside the folder, not empty, at most 50 MB,
 * `%PDF-` or XML; a signature by its structure), and uploaded as a worker uploads them
 * (src/worker/verified-file.ts: the file checked against what was read before its first byte
 * leaves). The packet's key is the sha256 of its files in order: the same files answer once.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { createDocumentFileChecker } from '../input/document-files.js';
import type { AppliedDocument, CheckedDocumentFile } from '../domain/deal.js';
import type { RealtyClient } from '../realty/client.js';
import { contentLink, type ContentPointer, type DocumentContent } from '../domain/gateway.js';
import { withGatewayRetry, type GatewayRetryOptions } from '../realty/gateway-retry.js';
import { uploadTimeoutMs } from '../worker/upload-documents.js';
import { verifiedFile } from '../worker/verified-file.js';

export const SIGNATURE_SUFFIX = '.sig';

/** A file that passed the checks. */
export type CheckedFile = CheckedDocumentFile;

export interface PacketFile {
  name: string;
  fileType: 'pdf' | 'xml';
  file: CheckedFile;
  signature?: CheckedFile;
}

export type PacketFolder = { ok: true; files: PacketFile[]; sha256: string } | { ok: false; problem: string };

/**
 * Checks one document (and the `.sig` beside it) with the load's checker: a document as the
 * checker reads a row's agreement, the only part of a deal it looks at.
 */
export async function checkDocument(folder: string, name: string): Promise<PacketFile | string> {
  const document: AppliedDocument = { signatureIds: [], fileType: 'pdf', file: { path: name }, signatureBeside: true };
  const problems = await createDocumentFileChecker({ baseDir: folder }).documents([
    { document, fileField: 'file', signatureField: 'signature' },
  ]);
  if (problems.length > 0) {
    const [p] = problems;
    // A signature's problem reads `file 1 <what>`: said of the .sig by its name.
    return p!.field === 'file' ? `${name} ${p!.message}` : `${name}${SIGNATURE_SUFFIX} ${p!.message.replace(/^file \d+ /, '')}`;
  }
  const file = document.file as CheckedFile;
  const signature = document.signatureFiles?.[0] as CheckedFile | undefined;
  return { name, fileType: document.fileType, file, ...(signature && { signature }) };
}

/** The folder's documents in name order, checked; the first problem found refuses the whole packet. */
export async function readPacketFolder(folder: string): Promise<PacketFolder> {
  const entries = (await readdir(folder, { withFileTypes: true })).filter((e) => !e.name.startsWith('.'));
  const names = entries.map((e) => e.name).sort();
  const documents = names.filter((n) => !n.endsWith(SIGNATURE_SUFFIX));
  const lone = names.find((n) => n.endsWith(SIGNATURE_SUFFIX) && !documents.includes(n.slice(0, -SIGNATURE_SUFFIX.length)));
  if (lone !== undefined) return { ok: false, problem: `${lone} signs no file of the folder` };
  if (documents.length === 0) return { ok: false, problem: 'the folder holds no document' };
  const files: PacketFile[] = [];
  for (const name of documents) {
    const checked = await checkDocument(folder, name);
    if (typeof checked === 'string') return { ok: false, problem: checked };
    files.push(checked);
  }
  const hash = createHash('sha256');
  for (const f of files) hash.update(`${f.file.sha256}\n${f.signature?.sha256 ?? ''}\n`);
  return { ok: true, files, sha256: hash.digest('hex') };
}

/** Uploads one checked file through `POST /contents`: its content id. A file changed since its check is refused (DocumentChangedError). */
export async function uploadChecked(
  client: RealtyClient,
  file: CheckedFile,
  what: string,
  timeoutMs: number,
  retry: GatewayRetryOptions = {},
): Promise<string> {
  const verified = verifiedFile(file, what);
  return withGatewayRetry(async () => {
    let pointer;
    try {
      pointer = await client.uploadContent(() => verified.open(), file.contentType, file.size, {
        timeoutMs: uploadTimeoutMs(timeoutMs, file.size),
      });
    } catch (err) {
      throw verified.changed ?? err;
    }
    if (verified.changed) throw verified.changed;
    return pointer.id;
  }, retry);
}

/** An applied document of a packet or an action: uploaded, as a docflow names it (its pointer and its signature's). */
export interface OtherDocument {
  documentType: 'other';
  content: DocumentContent;
}

export async function uploadDocument(
  client: RealtyClient,
  baseUrl: string,
  document: Pick<PacketFile, 'name' | 'fileType' | 'file' | 'signature'>,
  timeoutMs: number,
  retry?: GatewayRetryOptions,
): Promise<OtherDocument> {
  const pointer = (id: string): ContentPointer => ({ id, contentLink: contentLink(baseUrl, id) });
  const id = await uploadChecked(client, document.file, document.name, timeoutMs, retry);
  const content: DocumentContent = { info: { type: document.fileType, contentPointer: pointer(id) } };
  if (document.signature)
    content.signatures = [
      pointer(await uploadChecked(client, document.signature, `${document.name}${SIGNATURE_SUFFIX}`, timeoutMs, retry)),
    ];
  return { documentType: 'other', content };
}

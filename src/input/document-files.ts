/**
 * The load's checks of the files a row names (`agreementFile`, `agreementSignatureFiles`):
 * each exists, is a regular file inside the input's folder tree (or `--files-root`), is not
 * empty, at most 50 MB, and the agreement is a PDF (`%PDF-`) or XML. A file that passes gets
 * its absolute path, Content-Type, size and sha256 (the key its upload is remembered by),
 * so a worker sends it without looking again. Messages name the field, never the path.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Deal, DocumentFile, FieldProblem } from './deal.js';

/** The gateway's limit on one content (realty-api-notes.md). */
export const MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;

export const CONTENT_TYPES = {
  pdf: 'application/pdf',
  xml: 'application/xml',
  pkcs7: 'application/x-pkcs7-signature',
  pgp: 'application/pgp-signature',
} as const;

export interface DocumentFileOptions {
  /** The input file's folder: relative paths start there, and files must stay inside it. */
  baseDir: string;
  /** `--files-root`: absolute paths are allowed, and files may live under this folder too. */
  filesRoot?: string;
}

type Checked = { ok: true; file: Required<DocumentFile>; kind: 'pdf' | 'xml' | 'signature' } | { ok: false; message: string };

/**
 * Checks one load's files, each once: the same agreement named by a thousand rows is read
 * and hashed once (by its real path).
 */
export function createDocumentFileChecker(options: DocumentFileOptions) {
  const roots = Promise.all(
    [options.baseDir, ...(options.filesRoot ? [options.filesRoot] : [])].map((root) => realpath(root).catch(() => resolve(root))),
  );
  const seen = new Map<string, Promise<Checked>>();

  const checkOne = async (raw: string, role: 'agreement' | 'signature'): Promise<Checked> => {
    if (isAbsolute(raw) && !options.filesRoot) return { ok: false, message: 'is an absolute path: allowed only with --files-root' };
    const path = resolve(options.baseDir, raw);
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      return { ok: false, message: 'names no file (it does not exist or cannot be reached)' };
    }
    if (!(await roots).some((root) => inside(root, real)))
      return {
        ok: false,
        message: options.filesRoot
          ? "leads out of the input's folder and of --files-root (a link or ..)"
          : "leads out of the input's folder (a link or ..); --files-root allows another folder",
      };
    const key = `${role}\u0000${real}`;
    let checked = seen.get(key);
    if (!checked) seen.set(key, (checked = inspect(real, role).catch(() => ({ ok: false, message: 'cannot be read' }) as const)));
    return checked;
  };

  /** The row's problems with its files (none: its deal's files are filled in). */
  return async (deal: Deal): Promise<FieldProblem[]> => {
    const { agreement } = deal;
    const problems: FieldProblem[] = [];
    if (agreement.file) {
      const checked = await checkOne(agreement.file.path, 'agreement');
      if (checked.ok) {
        agreement.file = checked.file;
        // The file says what it is: the docflow's `type` follows it.
        if (checked.kind !== 'signature') agreement.fileType = checked.kind;
      } else problems.push({ field: 'agreementFile', message: checked.message });
    }
    const signatures: DocumentFile[] = [];
    for (const [i, signature] of (agreement.signatureFiles ?? []).entries()) {
      const checked = await checkOne(signature.path, 'signature');
      if (checked.ok) signatures.push(checked.file);
      else problems.push({ field: 'agreementSignatureFiles', message: `file ${i + 1} ${checked.message}` });
    }
    if (agreement.signatureFiles && problems.length === 0) agreement.signatureFiles = signatures;
    return problems;
  };
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

async function inspect(path: string, role: 'agreement' | 'signature'): Promise<Checked> {
  const info = await stat(path);
  if (!info.isFile()) return { ok: false, message: 'is not a regular file' };
  if (info.size === 0) return { ok: false, message: 'is empty' };
  if (info.size > MAX_DOCUMENT_BYTES) return { ok: false, message: 'is over 50 MB, the most the gateway takes' };
  const head = await readHead(path, 64);
  let kind: 'pdf' | 'xml' | 'signature';
  let contentType: string;
  if (role === 'agreement') {
    const type = agreementType(head);
    if (!type) return { ok: false, message: 'is neither a PDF (%PDF-) nor XML' };
    kind = type;
    contentType = CONTENT_TYPES[type];
  } else {
    kind = 'signature';
    contentType = head.toString('latin1').startsWith('-----BEGIN PGP SIGNATURE') ? CONTENT_TYPES.pgp : CONTENT_TYPES.pkcs7;
  }
  return { ok: true, kind, file: { path, contentType, size: info.size, sha256: await sha256Of(path) } };
}

/** `%PDF-`, or XML (`<`, after an optional byte order mark and blanks). */
export function agreementType(head: Buffer): 'pdf' | 'xml' | undefined {
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  let text = head.toString('utf8');
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  text = text.trimStart();
  return /^<(\?xml|[A-Za-z_])/.test(text) ? 'xml' : undefined;
}

async function readHead(path: string, bytes: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** Streamed: a 50 MB agreement is never whole in memory. */
export async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

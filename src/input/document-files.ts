/**
 * The load's checks of the files a row names (`agreementFile`, `agreementSignatureFiles`):
 * each exists, is a regular file inside the input's folder tree (or `--files-root`), is not
 * empty, at most 50 MB, the agreement is a PDF (`%PDF-`) or XML, and a signature is one by
 * its structure (CMS/PKCS#7 SignedData or OpenPGP, at most 1 MiB: detached-signature.ts). A
 * file that passes gets its absolute path, Content-Type, size, sha256 (the key its upload is
 * remembered by), inode and, once settled, change time, so a worker sends that file and no
 * other without looking again, and reads it once when nothing changed it (verified-file.ts). Messages name the field, never the path.
 */
import { createHash } from 'node:crypto';
import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { checkDetachedSignature, MAX_SIGNATURE_BYTES } from '../files/detached-signature.js';
import { FileRefusedError, openRegularFile, settledChangeTimeMs, type RegularFile } from '../files/regular-file.js';
import type { CheckedDocumentFile, Deal, DocumentFile, FieldProblem, RowDocument } from '../domain/deal.js';
import { agreementDocuments } from './validate-deal.js';

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
  /** The documents a row's deal applies, in upload order (its type's: src/docflows/registry.ts); default a registration's agreement. */
  documentsOf?: (deal: Deal) => RowDocument[];
}

/** What the load fills in of a file that passed. */
type CheckedFile = CheckedDocumentFile;

type Checked = { ok: true; file: CheckedFile; kind: 'pdf' | 'xml' | 'signature' } | { ok: false; message: string };

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

  /** The documents' problems with their files (none: their files are filled in). */
  const checkDocuments = async (documents: RowDocument[]): Promise<FieldProblem[]> => {
    const problems: FieldProblem[] = [];
    // A field naming several documents (a lift's otherDocumentFiles) says which one.
    const many = (field: string): boolean => documents.filter((d) => d.fileField === field).length > 1;
    for (const [n, { document, fileField, signatureField }] of documents.entries()) {
      const which = many(fileField) ? `file ${documents.slice(0, n + 1).filter((d) => d.fileField === fileField).length} ` : '';
      if (document.signatureBeside) {
        delete document.signatureBeside;
        if (document.file && (await exists(resolve(options.baseDir, `${document.file.path}.sig`))))
          document.signatureFiles = [{ path: `${document.file.path}.sig` }];
      }
      if (document.file) {
        const checked = await checkOne(document.file.path, 'agreement');
        if (checked.ok) {
          document.file = checked.file;
          // The file says what it is: the docflow's `type` follows it.
          if (checked.kind !== 'signature') document.fileType = checked.kind;
        } else problems.push({ field: fileField, message: `${which}${checked.message}` });
      }
      const signatures: DocumentFile[] = [];
      const before = problems.length;
      for (const [i, signature] of (document.signatureFiles ?? []).entries()) {
        const checked = await checkOne(signature.path, 'signature');
        if (checked.ok) signatures.push(checked.file);
        else problems.push({ field: signatureField, message: `${which ? `${which}signature` : `file ${i + 1}`} ${checked.message}` });
      }
      if (document.signatureFiles && problems.length === before) document.signatureFiles = signatures;
    }
    return problems;
  };
  /** The row's problems with its files (none: its deal's files are filled in). */
  const documentsOf = options.documentsOf ?? agreementDocuments;
  return Object.assign((deal: Deal): Promise<FieldProblem[]> => checkDocuments(documentsOf(deal)), { documents: checkDocuments });
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * One descriptor for every look at the file: opened without following a link and without
 * blocking (a FIFO put there would hang the load), refused unless fstat says regular, and its
 * head, signature bytes and sha256 read from that descriptor, each read with a deadline.
 */
async function inspect(path: string, role: 'agreement' | 'signature'): Promise<Checked> {
  let file: RegularFile;
  const readAt = Date.now();
  try {
    file = await openRegularFile(path, { name: 'the file' });
  } catch (err) {
    if (err instanceof FileRefusedError && err.reason !== 'timeout') return { ok: false, message: 'is not a regular file' };
    return { ok: false, message: err instanceof FileRefusedError ? 'cannot be read (the disk did not answer in time)' : 'cannot be read' };
  }
  try {
    const { size, ino } = file.stats;
    if (size === 0) return { ok: false, message: 'is empty' };
    if (size > MAX_DOCUMENT_BYTES) return { ok: false, message: 'is over 50 MB, the most the gateway takes' };
    let kind: 'pdf' | 'xml' | 'signature';
    let contentType: string;
    if (role === 'agreement') {
      const head = Buffer.alloc(64);
      const type = agreementType(head.subarray(0, await file.read(head, 0)));
      if (!type) return { ok: false, message: 'is neither a PDF (%PDF-) nor XML' };
      kind = type;
      contentType = CONTENT_TYPES[type];
    } else {
      if (size > MAX_SIGNATURE_BYTES) return { ok: false, message: 'is over 1 MiB, more than a detached signature holds' };
      const signature = checkDetachedSignature(await file.readWhole(MAX_SIGNATURE_BYTES));
      if (!signature.ok) return { ok: false, message: signature.problem };
      kind = 'signature';
      contentType = signature.kind === 'pgp' ? CONTENT_TYPES.pgp : CONTENT_TYPES.pkcs7;
    }
    const hash = createHash('sha256');
    const read = await file.readAll((chunk) => hash.update(chunk), MAX_DOCUMENT_BYTES);
    // Grown or shrunk while it was read: not the file fstat described.
    if (read !== size) return { ok: false, message: 'changed while the load read it' };
    const changedAtMs = settledChangeTimeMs(file.stats, readAt);
    return {
      ok: true,
      kind,
      file: { path, contentType, size, sha256: hash.digest('hex'), inode: ino, ...(changedAtMs !== undefined && { changedAtMs }) },
    };
  } finally {
    await file.close();
  }
}

/** `%PDF-`, or XML (`<`, after an optional byte order mark and blanks). */
export function agreementType(head: Buffer): 'pdf' | 'xml' | undefined {
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  let text = head.toString('utf8');
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  text = text.trimStart();
  return /^<(\?xml|[A-Za-z_])/.test(text) ? 'xml' : undefined;
}

/**
 * The bytes of the files the sandbox serves: one-page PDFs (applications to sign, the
 * register's extract) and detached "signatures" of them. Made on each download from what
 * the docflow holds, so nothing is stored and the same docflow always gives the same bytes.
 * They carry no personal data: a docflow id, a cadastral number, a role.
 */
import { createHash } from 'node:crypto';

export type FileKind = 'application' | 'extract' | 'signature';

/** A file of a docflow as the sandbox keeps it (its bytes are made when downloaded). */
export interface SandboxFile {
  id: string;
  /** The gateway's `type`: `application`, `egrnExtract` or `signature`. */
  type: string;
  kind: FileKind;
  /** An application's signer. */
  role?: string;
}

/** What a file's page says of its docflow (no personal data). */
export interface FileContext {
  docflowId: string;
  /** The cadastral number. */
  object: string;
  /** The creation's number, for the registration number. */
  seq: number;
}

export const CONTENT_TYPES: Record<FileKind, string> = {
  application: 'application/pdf',
  extract: 'application/pdf',
  signature: 'application/x-pkcs7-signature',
};

export const EXTENSIONS: Record<FileKind, string> = { application: 'pdf', extract: 'pdf', signature: 'sig' };

/** PDF text strings: printable ASCII, with `(`, `)` and `\` escaped. */
function pdfText(line: string): string {
  return line.replace(/[^\x20-\x7e]/g, '?').replace(/[()\\]/g, (c) => `\\${c}`);
}

/** A valid one-page PDF 1.4 of a few lines of Helvetica, with a correct cross-reference table. */
export function tinyPdf(lines: readonly string[]): Buffer {
  const text = lines.map((line, i) => `BT /F1 12 Tf 56 ${780 - i * 18} Td (${pdfText(line)}) Tj ET`).join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(text, 'latin1')} >>\nstream\n${text}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** A stand-in for a detached CMS signature: PEM-armoured, over the signed PDF's sha256. */
function tinySignature(signed: readonly string[]): Buffer {
  const digest = createHash('sha256').update(tinyPdf(signed)).digest('base64');
  return Buffer.from(
    `-----BEGIN PKCS7-----\n${Buffer.from(`sandbox-signature sha256=${digest}`).toString('base64')}\n-----END PKCS7-----\n`,
  );
}

function extractLines(c: FileContext): string[] {
  return [
    'Extract from the Unified State Register of Real Estate (sandbox)',
    `Docflow ${c.docflowId}`,
    `Object ${c.object}`,
    `Encumbrance: mortgage, registration number ${c.object}-${String(c.seq).padStart(6, '0')}`,
  ];
}

function applicationLines(c: FileContext, role: string): string[] {
  return [
    'Application for the registration of a mortgage (sandbox)',
    `Docflow ${c.docflowId}`,
    `Object ${c.object}`,
    `To be signed by: ${role}`,
  ];
}

/** The file's bytes, the same every time. A signature signs the extract (the only file the register signs). */
export function fileBytes(file: SandboxFile, context: FileContext): Buffer {
  if (file.kind === 'signature') return tinySignature(extractLines(context));
  return tinyPdf(file.kind === 'extract' ? extractLines(context) : applicationLines(context, file.role ?? ''));
}

/**
 * The bytes of the files the sandbox serves: one-page PDFs (applications to sign, the
 * register's extract), the other types' results (XML, PDF, ZIP archives) and detached
 * "signatures" of them. Made on each download from what the docflow holds, so nothing is
 * stored and the same docflow always gives the same bytes. They carry no personal data: a
 * docflow id, a cadastral number, a role, a mortgage record and its bank's INN.
 */
import { createHash } from 'node:crypto';
import { zipStored } from './zip.js';

export type FileKind = 'application' | 'extract' | 'signature' | 'report';

/** A result's content, fixed when its docflow completes (a record lifted later stays in the extract made before). */
export type Report =
  | { format: 'pdf'; lines: readonly string[] }
  | { format: 'xml'; text: string }
  | { format: 'zip'; entries: ReadonlyArray<{ name: string; report: Report }> };

/** A file of a docflow as the sandbox keeps it (its bytes are made when downloaded). */
export interface SandboxFile {
  id: string;
  /** The gateway's `type`: `application`, `egrnExtract`, `signature`, `extract_info:xml`, `outdoc`, ... */
  type: string;
  kind: FileKind;
  /** An application's signer. */
  role?: string;
  /** A report's content. */
  report?: Report;
  /** What a signature signs, when it is not the encumbrance_request's extract. */
  signs?: SandboxFile;
}

/** What a file's page says of its docflow (no personal data). */
export interface FileContext {
  docflowId: string;
  /** The cadastral number. */
  object: string;
  /** The creation's number, for the registration number. */
  seq: number;
}

const FORMATS = {
  pdf: { contentType: 'application/pdf', extension: 'pdf' },
  xml: { contentType: 'application/xml', extension: 'xml' },
  zip: { contentType: 'application/zip', extension: 'zip' },
  sig: { contentType: 'application/x-pkcs7-signature', extension: 'sig' },
} as const;

function formatOf(file: SandboxFile): keyof typeof FORMATS {
  if (file.kind === 'signature') return 'sig';
  return file.report?.format ?? 'pdf';
}

export const contentTypeOf = (file: SandboxFile): string => FORMATS[formatOf(file)].contentType;
export const extensionOf = (file: SandboxFile): string => FORMATS[formatOf(file)].extension;

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

/** A stand-in for a detached CMS signature: PEM-armoured, over the signed file's sha256. */
function tinySignature(signed: Buffer): Buffer {
  const digest = createHash('sha256').update(signed).digest('base64');
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

function reportBytes(report: Report): Buffer {
  if (report.format === 'pdf') return tinyPdf(report.lines);
  if (report.format === 'xml') return Buffer.from(report.text, 'utf8');
  return zipStored(report.entries.map(({ name, report: inner }) => ({ name, bytes: reportBytes(inner) })));
}

/** The file's bytes, the same every time. A signature signs what it names, else the extract. */
export function fileBytes(file: SandboxFile, context: FileContext): Buffer {
  if (file.kind === 'signature') return tinySignature(file.signs ? fileBytes(file.signs, context) : tinyPdf(extractLines(context)));
  if (file.report !== undefined) return reportBytes(file.report);
  return tinyPdf(file.kind === 'extract' ? extractLines(context) : applicationLines(context, file.role ?? ''));
}

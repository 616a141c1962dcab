/**
 * The registry's answers as files: the extracts of an object_request and the notice of a
 * lifted mortgage. Small XML and PDF files naming the object and its mortgage records, never
 * a person (the sandbox keeps no owners). Made when the docflow completes, from the records
 * as they stand then.
 */
import type { Report, SandboxFile } from './files.js';
import type { EncumbranceRecord } from './registry.js';

export const EXTRACT_TYPES = ['info', 'base', 'ownership'] as const;
export type ExtractType = (typeof EXTRACT_TYPES)[number];

export interface ReportContext {
  docflowId: string;
  cadastralNumber: string;
  /** YYYY-MM-DD of the completion. */
  date: string;
}

export type ResultFile = { file: SandboxFile; signature?: SandboxFile };

const TITLES: Record<ExtractType, string> = {
  info: 'Extract on the characteristics of the object and the registered rights',
  base: 'Basic extract on the object',
  ownership: 'Extract on the transfers of rights to the object',
};

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function recordXml(r: EncumbranceRecord): string {
  const attributes = [`number="${escapeXml(r.number)}"`, `date="${r.date}"`, `type="${r.type}"`, `encumbrancerInn="${r.encumbrancerInn}"`];
  return `    <encumbrance ${attributes.join(' ')}/>`;
}

function recordLines(records: readonly EncumbranceRecord[]): string[] {
  if (records.length === 0) return ['Mortgage records: none'];
  return [
    `Mortgage records: ${records.length}`,
    ...records.map((r) => `Record ${r.number} of ${r.date}: ${r.type}, encumbrancer INN ${r.encumbrancerInn}`),
  ];
}

function extractXml(type: ExtractType, c: ReportContext, records: readonly EncumbranceRecord[]): string {
  const body = records.length === 0 ? '  <encumbrances/>' : ['  <encumbrances>', ...records.map(recordXml), '  </encumbrances>'].join('\n');
  // The sandbox keeps no owners: an ownership extract says so rather than inventing any.
  const transfers = type === 'ownership' ? '\n  <rightTransfers recorded="0"/>' : '';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<extract xmlns="urn:realty-sandbox:extract" type="${type}" docflowId="${c.docflowId}" date="${c.date}">`,
    `  <object cadastralNumber="${escapeXml(c.cadastralNumber)}"/>`,
    `${body}${transfers}`,
    '</extract>',
    '',
  ].join('\n');
}

function extractPdf(type: ExtractType, c: ReportContext, records: readonly EncumbranceRecord[]): Report {
  return {
    format: 'pdf',
    lines: [`${TITLES[type]} (sandbox)`, `Docflow ${c.docflowId}, ${c.date}`, `Object ${c.cadastralNumber}`, ...recordLines(records)],
  };
}

const report = (id: string, type: string, content: Report): SandboxFile => ({ id, type, kind: 'report', report: content });
const signatureOf = (id: string, signs: SandboxFile): SandboxFile => ({ id, type: 'signature', kind: 'signature', signs });

/**
 * An object_request's result: `extract_<type>:xml` (signed) and `extract_<type>:pdf`; for
 * `base`, whose documentation lists no file of its own, the `outdoc` archive of both.
 * `ids`: three drawn at the docflow's creation.
 */
export function extractFiles(
  type: ExtractType,
  ids: readonly string[],
  c: ReportContext,
  records: readonly EncumbranceRecord[],
): ResultFile[] {
  const [xmlId = 'extract-xml', signatureId = 'extract-xml-signature', pdfId = 'extract-pdf'] = ids;
  const xml: Report = { format: 'xml', text: extractXml(type, c, records) };
  const pdf = extractPdf(type, c, records);
  if (type === 'base') {
    const entries = [
      { name: 'extract_base.xml', report: xml },
      { name: 'extract_base.pdf', report: pdf },
    ];
    return [{ file: report(xmlId, 'outdoc', { format: 'zip', entries }) }];
  }
  const xmlFile = report(xmlId, `extract_${type}:xml`, xml);
  return [{ file: xmlFile, signature: signatureOf(signatureId, xmlFile) }, { file: report(pdfId, `extract_${type}:pdf`, pdf) }];
}

/** A lift's result: the `outdoc` archive with the registry's notice that the record is removed. */
export function liftNotice(id: string, c: ReportContext, record: EncumbranceRecord): ResultFile {
  const xml = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<notice xmlns="urn:realty-sandbox:notice" docflowId="${c.docflowId}" date="${c.date}">`,
    `  <object cadastralNumber="${escapeXml(c.cadastralNumber)}"/>`,
    `  <lifted>`,
    recordXml(record),
    '  </lifted>',
    '</notice>',
    '',
  ].join('\n');
  const pdf: Report = {
    format: 'pdf',
    lines: [
      'Notice of the registration of a mortgage lifted (sandbox)',
      `Docflow ${c.docflowId}, ${c.date}`,
      `Object ${c.cadastralNumber}`,
      `Record ${record.number} of ${record.date} (${record.type}) is lifted`,
    ],
  };
  const entries = [
    { name: 'notice.xml', report: { format: 'xml', text: xml } as Report },
    { name: 'notice.pdf', report: pdf },
  ];
  return { file: report(id, 'outdoc', { format: 'zip', entries }) };
}

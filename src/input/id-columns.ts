/**
 * The columns of the tool's files that hold ids (deals, docflows, payment UINs, cadastral
 * numbers, requests, INN and SNILS): written for Excel they stay text, in a CSV
 * (`="…"`, csv-cell.ts) and in a workbook (a text cell), whatever digits they hold.
 */
const ID_COLUMNS = new Set(
  [
    'dealId',
    'docflowId',
    'otherDocflowId',
    'requestId',
    'cadastralNumber',
    'uin',
    'paymentUin',
    'inn',
    'payerInn',
    'snils',
    'ownerSnils',
    'owner2Snils',
    'ownerDocSeries',
    'ownerDocNumber',
    'owner2DocSeries',
    'owner2DocNumber',
    'ownerDocIssuerCode',
    'owner2DocIssuerCode',
    'agreementContentId',
    'agreementSignatureIds',
    'fileId',
    'sha256',
  ].map((name) => name.toLowerCase()),
);

/** Whether `column` (a column name of ours or a canonical field, any case) holds ids. */
export function isIdColumn(column: string): boolean {
  return ID_COLUMNS.has(column.trim().toLowerCase());
}

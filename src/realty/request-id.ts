/**
 * The form of our requestIds, `<bank INN>:<type code>:<try>:<dealId>`: a function of the bank,
 * the docflow type, the dealId and the try alone (the ledger, src/ledger/, gives each try its
 * number), so the news feed tells whose docflow an item is. Each type's code is its module's
 * (src/docflows/); the table of them, and requestIdOf and parseRequestId by type, are the
 * registry's (src/docflows/registry.ts).
 */

/**
 * `<bank INN>:<code>:<n>:<dealId>`: the same deal of one type always sends the same requestId
 * for one resubmission number, whoever loads it, in whichever batch, on whichever host; a
 * deal's registration and its lift name different entries. The INN and `n` are digits and the
 * code letters, so the dealId after the third colon may hold anything.
 */
export function formatRequestId(bank: string, code: string, n: number, dealId: string): string {
  return `${bank}:${code}:${n}:${dealId}`;
}

/** The bank, type code, try and dealId of a requestId in our form; undefined for anything else. */
export function splitRequestId(requestId: string): { bank: string; code: string; n: number; dealId: string } | undefined {
  const match = /^(\d+):([a-z]+):(\d+):(.+)$/s.exec(requestId);
  return match ? { bank: match[1]!, code: match[2]!, n: Number(match[3]), dealId: match[4]! } : undefined;
}

/** What a type's code may be: letters, as splitRequestId reads them. */
export const REQUEST_ID_CODE = /^[a-z]+$/;

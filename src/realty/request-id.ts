/**
 * The requestId of each try of a deal, `<bank INN>:<type code>:<try>:<dealId>`: a function of
 * the bank, the docflow type, the dealId and the try alone (the ledger, src/ledger/, gives each
 * try its number), so the news feed tells whose docflow an item is.
 */
import { DOCFLOW_TYPE_CODES, type DocflowType } from '../domain/gateway.js';

export { DOCFLOW_TYPE_CODES };
export type { DocflowType };
/** A row's type when its batch names none: the product's first. */
export const REGISTRATION: DocflowType = 'encumbrance_request';
const TYPE_OF_CODE = new Map<string, DocflowType>(Object.entries(DOCFLOW_TYPE_CODES).map(([type, code]) => [code, type as DocflowType]));

/**
 * `<bank INN>:<type code>:<n>:<dealId>`: the same deal of one type always sends the same
 * requestId for one resubmission number, whoever loads it, in whichever batch, on whichever
 * host; a deal's registration and its lift name different entries. The INN and `n` are
 * digits and the code letters, so the dealId after the third colon may hold anything.
 */
export function requestIdOf(bank: string, dealId: string, n = 0, type: DocflowType = REGISTRATION): string {
  return `${bank}:${DOCFLOW_TYPE_CODES[type]}:${n}:${dealId}`;
}

/** The bank, type, try and dealId a requestId of ours names; undefined for anyone else's. */
export function parseRequestId(requestId: string): { bank: string; type: DocflowType; n: number; dealId: string } | undefined {
  const match = /^(\d+):([a-z]+):(\d+):(.+)$/s.exec(requestId);
  const type = match && TYPE_OF_CODE.get(match[2]!);
  return match && type ? { bank: match[1]!, type, n: Number(match[3]), dealId: match[4]! } : undefined;
}

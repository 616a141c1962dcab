/**
 * The property a deal is for, as one comparable key: its cadastral number when it has
 * one, and always a canonical form of its address. The ledger keeps it for every deal it
 * claims (src/ledger/), so that a dealId that comes back for another property is told
 * apart from the same deal loaded again; the validator compares two rows of one file by it.
 *
 * The address form is our own, small and deliberately plain (lower case, ё → е, spaces
 * collapsed): it decides only that two rows are the SAME property when it is equal. Two
 * addresses written differently are never taken for two properties on their own: only
 * two different cadastral numbers say that (compareProperties).
 */
import { createHash } from 'node:crypto';
import type { Deal } from '../domain/deal.js';

export interface PropertyKey {
  /** The cadastral number, when the row has one (or suggest found it). */
  cadastralNumber?: string;
  /**
   * The address, canonical (canonicalAddress); in the ledger its digest (storedProperty).
   * Absent in a ledger entry written before entries kept one.
   */
  address?: string;
}

export type PropertyFields = Pick<
  Deal,
  'cadastralNumber' | 'region' | 'city' | 'settlement' | 'street' | 'house' | 'building' | 'structure' | 'apartment'
>;

/** Lower case, ё → е, every run of whitespace one space, trimmed. */
export function canonicalText(text: string): string {
  return text.toLowerCase().replace(/ё/g, 'е').replace(/\s+/g, ' ').trim();
}

/**
 * "region, city, settlement, street, house корп building стр structure, apartment",
 * canonical, the parts a row leaves empty left out.
 */
export function canonicalAddress(deal: Partial<PropertyFields>): string {
  const part = (text: string | undefined) => (text === undefined ? '' : canonicalText(text));
  const house = [part(deal.house), deal.building ? `корп ${part(deal.building)}` : '', deal.structure ? `стр ${part(deal.structure)}` : '']
    .filter(Boolean)
    .join(' ');
  return [deal.region, deal.city, deal.settlement, deal.street].map(part).concat(house, part(deal.apartment)).filter(Boolean).join(', ');
}

/** The key of a deal's property; `cadastralNumber` (one suggest found) in place of the row's own. */
export function propertyKeyOf(deal: Partial<PropertyFields>, cadastralNumber = deal.cadastralNumber): PropertyKey {
  const address = canonicalAddress(deal);
  const number = cadastralNumber?.trim();
  return { ...(number && { cadastralNumber: number }), ...(address && { address }) };
}

/**
 * Whether two keys name one property: two cadastral numbers decide; otherwise equal
 * addresses say `same`, and anything else is `unknown` (an address written another way,
 * a key with nothing in it). Generic so that hashed keys compare the same way.
 */
export function compareProperties<T>(
  a: { cadastralNumber?: T; address?: T },
  b: { cadastralNumber?: T; address?: T },
): 'same' | 'different' | 'unknown' {
  if (a.cadastralNumber !== undefined && b.cadastralNumber !== undefined)
    return a.cadastralNumber === b.cadastralNumber ? 'same' : 'different';
  if (a.address !== undefined && a.address === b.address) return 'same';
  return 'unknown';
}

/**
 * The key as the ledger keeps it (and compares it): the address as a digest, 16 hex digits of its
 * SHA-256, never its text. An entry lives 400 days and a million deals a year is a bank's
 * size: about 17 bytes an entry in place of about 100, and the address is only ever compared
 * (a conflict is named by two cadastral numbers, which every entry written since has).
 */
export function storedProperty(key: PropertyKey): PropertyKey {
  let kept = stored.get(key);
  if (kept === undefined) {
    kept =
      key.address === undefined ? { ...key } : { ...key, address: createHash('sha256').update(key.address).digest('hex').slice(0, 16) };
    stored.set(key, kept);
  }
  return kept;
}

/**
 * Each key's stored form, made once: a worker's run passes one key to its claim and to its
 * outcome, and each would hash it again. Keys are never changed once made (every function here
 * makes a new one), nor are the stored forms given out.
 */
const stored = new WeakMap<PropertyKey, PropertyKey>();

/** The property as a message names it: its cadastral number, else its address; never a person. */
export function describeProperty(key: PropertyKey): string {
  return key.cadastralNumber ?? key.address ?? 'a property the ledger did not keep';
}

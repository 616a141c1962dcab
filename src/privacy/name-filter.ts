/**
 * Which words of a text are a row's persons' names (maskNames asks), in two forms:
 *
 * - `exactMatcher`: with the deal at hand (the worker: a creation error, a failed reason):
 *   every word of every person's surname, given name and patronymic, by its key (name-key.ts).
 * - `personFilter` / `filterMatcher`: for the news feed, which masks a registry error days
 *   later, when no personal data is left to mask it with. The claim keeps with the deal's
 *   ledger entry a filter that cannot be read back into a name: each surname's key as a
 *   16-bit hash, each given name and patronymic as an 8-bit hash of itself together with its
 *   surname's key. A 16-bit value stands for one in 65,536 of all the keys there are: about
 *   five of 300,000 Russian surnames share each; a given name's 8 bits, taken with those
 *   five surnames, are shared by about sixty of the names that go with them. The follower
 *   masks a word whose key's hash is among the surnames', and beside a masked surname a
 *   word whose pair hash is among the rest. A word not a name that shares a hash (a word of a
 *   text is tried by up to five keys against two or three surnames: about one word in 5,000;
 *   measured, 1 of the 2,715 distinct words of this project's docs for one person set) is masked too: a word lost, never a name let through.
 */
import { keysOfWord, nameKey } from './name-key.js';

/** A person's names as the deal or the profile has them. */
export interface PersonNames {
  surname?: string | undefined;
  name?: string | undefined;
  patronymic?: string | undefined;
}

/** What maskNames asks of a word's keys. */
export interface NameMatcher {
  /** A name of the row's persons wherever it stands (a surname; with the deal at hand, any of their names). */
  isName(key: string): boolean;
  /** A given name or patronymic of the person whose surname has the key `surname`, standing beside it. */
  isBeside(surname: string, key: string): boolean;
}

/** The keys of a name's words (a double surname, a patronymic with `оглы`). */
function keysOf(name: string | undefined): string[] {
  return (name?.match(/[\p{L}\p{M}]+/gu) ?? []).flatMap((word) => nameKey(word) ?? []);
}

/** Each person's surname keys, and the keys of the names that go with them. */
function namesOf(persons: readonly PersonNames[]): Array<{ surnames: string[]; given: string[] }> {
  return persons.map((p) => ({ surnames: keysOf(p.surname), given: [...keysOf(p.name), ...keysOf(p.patronymic)] }));
}

export function exactMatcher(persons: readonly PersonNames[]): NameMatcher | undefined {
  const names = new Set<string>();
  const pairs = new Set<string>();
  for (const { surnames, given } of namesOf(persons)) {
    for (const key of [...surnames, ...given]) names.add(key);
    for (const s of surnames) for (const g of given) pairs.add(`${s} ${g}`);
  }
  return names.size === 0 ? undefined : { isName: (key) => names.has(key), isBeside: (s, key) => pairs.has(`${s} ${key}`) };
}

/** FNV-1a, 32 bits, carried on from `hash` (the offset basis for a text of its own): the filter needs spread, not secrecy (its few bits are the protection). */
function fnv1a(text: string, hash = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
const VERSION = '1';
/** FNV-1a of `pf1 `: every hash of the filter begins with it, so it is hashed once. */
const PREFIX = fnv1a(`pf${VERSION} `);
const fold16 = (h: number): number => (h ^ (h >>> 16)) & 0xffff;
const fold8 = (h: number): number => (h ^ (h >>> 8) ^ (h >>> 16) ^ (h >>> 24)) & 0xff;
/** fnv1a(`pf1 ${key}`), folded to 16 bits. */
const hash16 = (key: string): number => fold16(fnv1a(key, PREFIX));
/** fnv1a(`pf1 ${surname} ${key}`), folded to 8 bits. */
const hash8 = (surname: string, key: string): number => fold8(fnv1a(key, fnv1a(' ', fnv1a(surname, PREFIX))));

/** A person's part of a filter: their surnames' hashes, and the pair hashes of their other names with each. */
interface PersonHashes {
  surnames: number[];
  pairs: number[];
}

/**
 * Each person's hashes, kept by their names: the profile's representative is on every row of a
 * batch, and each claim makes its deal's filter. Emptied when full.
 */
const hashed = new Map<string, PersonHashes>();
const HASHED_MAX = 10_000;

function hashesOf(p: PersonNames): PersonHashes {
  const id = `${p.surname ?? ''}\u0000${p.name ?? ''}\u0000${p.patronymic ?? ''}`;
  let kept = hashed.get(id);
  if (kept === undefined) {
    const surnames = keysOf(p.surname);
    const given = surnames.length === 0 ? [] : [...keysOf(p.name), ...keysOf(p.patronymic)];
    kept = { surnames: [], pairs: [] };
    for (const s of surnames) {
      kept.surnames.push(hash16(s));
      // The hash state after `pf1 <surname> `, carried on over each given name's key.
      const base = fnv1a(' ', fnv1a(s, PREFIX));
      for (const g of given) kept.pairs.push(fold8(fnv1a(g, base)));
    }
    if (hashed.size >= HASHED_MAX) hashed.clear();
    hashed.set(id, kept);
  }
  return kept;
}

/**
 * The filter a ledger entry keeps (`1` and base64url: the count of surname hashes, each in two
 * bytes, then the pair hashes, a byte each); '' when the persons have no name.
 */
export function personFilter(persons: readonly PersonNames[]): string {
  const surnames = new Set<number>();
  const pairs = new Set<number>();
  for (const p of persons) {
    const h = hashesOf(p);
    for (const s of h.surnames) surnames.add(s);
    for (const x of h.pairs) pairs.add(x);
  }
  if (surnames.size === 0) return '';
  const sorted = [...surnames].sort((a, b) => a - b).slice(0, 255);
  const sortedPairs = [...pairs].sort((a, b) => a - b);
  const bytes = Buffer.allocUnsafe(1 + 2 * sorted.length + sortedPairs.length);
  let at = 0;
  bytes[at++] = sorted.length;
  for (const h of sorted) {
    bytes[at++] = h >>> 8;
    bytes[at++] = h & 0xff;
  }
  for (const x of sortedPairs) bytes[at++] = x;
  return `${VERSION}${bytes.toString('base64url')}`;
}

/** The matcher of a stored filter; undefined for none, or one this version cannot read. */
export function filterMatcher(filter: string | undefined): NameMatcher | undefined {
  if (!filter?.startsWith(VERSION)) return undefined;
  const bytes = Buffer.from(filter.slice(VERSION.length), 'base64url');
  const count = bytes[0] ?? 0;
  if (count === 0 || bytes.length < 1 + 2 * count) return undefined;
  const surnames = new Set<number>();
  for (let i = 0; i < count; i++) surnames.add((bytes[1 + 2 * i]! << 8) | bytes[2 + 2 * i]!);
  const pairs = new Set<number>(bytes.subarray(1 + 2 * count));
  return { isName: (key) => surnames.has(hash16(key)), isBeside: (s, key) => pairs.has(hash8(s, key)) };
}

/** Whether a word of a text may be one of the matcher's names: the key it matched by, or undefined. */
export function nameKeyIn(word: string, matcher: NameMatcher): string | undefined {
  return keysOfWord(word).find((key) => matcher.isName(key));
}

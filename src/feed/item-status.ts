/**
 * What a news item says of its docflow, in the few fields the bank acts on (docs/operations.md,
 * "The life of a deal"): its state, the requirement it waits for (a signature, a payment: its
 * uin, amount and payer), and the registry's error. The gateway's shapes are read
 * loosely (docs/gateway.md, "After creation"): any part may be missing, unknown extras are
 * ignored. Nothing personal leaves here: a payer who is a person becomes initials, and an
 * error's text loses names, numbers and dates the registry may echo: the deal's own persons'
 * names however it spells them (the filter its ledger entry keeps, src/privacy/name-filter.ts),
 * and any name, number and date it looks like.
 */
import type { NewsDocflow } from '../domain/gateway.js';
import type { DocflowStatus, Requirement } from '../domain/outcome.js';
import { MASK, maskNames } from '../privacy/mask-names.js';
import type { NameMatcher } from '../privacy/name-filter.js';
import { normalizeText } from '../privacy/normalize-text.js';
// Who pays: an organization as given, a person as initials (src/privacy/payer.ts).
import { initials, maskPayer } from '../privacy/payer.js';

export { maskPayer };

export { MASK };

type Loose = Record<string, unknown>;

const isObject = (v: unknown): v is Loose => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;

/** `requirements` as an object of lists ({signature: [...]}, {payment: [...]}) or a list of such objects. */
function requirementLists(requirements: unknown): { signature: unknown[]; payment: unknown[] } {
  const lists = { signature: [] as unknown[], payment: [] as unknown[] };
  const parts = Array.isArray(requirements) ? requirements : [requirements];
  for (const part of parts) {
    if (!isObject(part)) continue;
    for (const kind of ['signature', 'payment'] as const) {
      const value = part[kind];
      if (Array.isArray(value)) lists[kind].push(...(value as unknown[]));
      else if (isObject(value)) lists[kind].push(value);
    }
  }
  return lists;
}

/**
 * A person as initials only (`Т. И. П.`): surname, name, patronymic (or lastName,
 * firstName, or one name), whatever the gateway sent of them, full or already masked.
 */
export function personInitials(person: unknown): string | undefined {
  if (typeof person === 'string') return initials([person]);
  if (!isObject(person)) return undefined;
  return (
    initials([text(person.surname), text(person.name), text(person.patronymic)]) ??
    initials([text(person.lastName), text(person.firstName), text(person.fullName)])
  );
}

const CADASTRAL = /\b\d{2}:\d{2}:\d{6,7}:\d+\b/g;
/** A run of at least 4 digits, however separated (SNILS, passport, phone, INN of a person). */
const NUMBER = /\d(?:[\s\-./]{0,2}\d){3,}/g;
/** Two or three capitalised Cyrillic words in a row: a person's name as registries write it. */
const NAME = /[А-ЯЁ][а-яёА-ЯЁ-]+(?:\s+[А-ЯЁ][а-яёА-ЯЁ-]+){1,2}/g;

/**
 * A registry's text, safe for a results file: read normalized (full-width digits, zero-width
 * spaces, soft hyphens: src/privacy/normalize-text.ts); the deal's persons' names masked however
 * they are spelled (`names`, when the deal is known); then any name, number and date masked; a
 * cadastral number (the property's, not a person's) kept. Over-masking a place name costs a
 * word; letting a passport number through costs a bank its licence.
 */
export function maskRegistryText(value: string, names?: NameMatcher): string {
  const normal = normalizeText(value);
  const own = names ? maskNames(normal, names) : normal;
  const kept: string[] = [];
  const held = own.replace(CADASTRAL, (cn) => `\u0000${kept.push(cn) - 1}\u0000`);
  const masked = held.replace(NAME, MASK).replace(NUMBER, MASK);
  // eslint-disable-next-line no-control-regex
  return masked.replace(/\u0000(\d+)\u0000/g, (_, i: string) => kept[Number(i)]!);
}

/**
 * `code: message` of an Error object (nested errors' messages after it), masked (`names`: the
 * deal's persons, when it is known); undefined when there is none.
 */
export function registryErrorOf(error: unknown, names?: NameMatcher): string | undefined {
  if (!isObject(error)) return text(error) && maskRegistryText(text(error)!, names);
  const messages = [text(error.message)];
  if (Array.isArray(error.errors)) for (const nested of error.errors) if (isObject(nested)) messages.push(text(nested.message));
  const message = messages.filter(Boolean).join('; ');
  const code = text(error.code);
  const whole = code && message ? `${code}: ${message}` : (code ?? message);
  if (!whole) return undefined;
  // 500 UTF-16 units, never half a character (a lone surrogate is no text anyone can read).
  const cut = maskRegistryText(whole, names).slice(0, 500);
  return /[\ud800-\udbff]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/** Whether an item carries a registry error (its text is masked with the deal's persons: `statusOfItem`'s `names`). */
export const hasRegistryError = (docflow: NewsDocflow): boolean => docflow.state === 'error' || docflow.error !== undefined;

/** Where a docflow stands, as this item shows it (`stateAt` is the item's date; `names`: the deal's persons). */
export function statusOfItem(docflow: NewsDocflow, date: string, names?: NameMatcher): DocflowStatus {
  const status: DocflowStatus = { state: docflow.state, stateAt: date };
  // Most items (queued, sent, and any state without a requirement, an error or a result): no
  // lists to make, since four arrays an item are garbage the follower makes on every page.
  if (docflow.requirements === undefined && docflow.error === undefined && docflow.result === undefined) return status;
  const lists = requirementLists(docflow.requirements);
  const requirement: Requirement | undefined = lists.payment.length > 0 ? 'payment' : lists.signature.length > 0 ? 'signature' : undefined;
  if (requirement && docflow.state === 'suspended') {
    status.requirement = requirement;
    if (requirement === 'payment') {
      const payments = lists.payment.filter(isObject);
      const uins = payments.flatMap((p) => text(p.uin) ?? []);
      const amounts = payments.flatMap((p) => text(p.amount) ?? []);
      const payers = [...new Set(payments.flatMap((p) => maskPayer(p.payer) ?? []))];
      if (uins.length > 0) status.paymentUin = uins.join(' ');
      if (amounts.length > 0) status.paymentAmount = amounts.join(' ');
      if (payers.length > 0) status.payer = payers.join('; ');
    }
  }
  if (hasRegistryError(docflow)) {
    const registryError = registryErrorOf(docflow.error, names);
    if (registryError) status.registryError = registryError;
  }
  const result = isObject(docflow.result) ? docflow.result : undefined;
  if (result && Array.isArray(result.files)) status.resultFiles = result.files.length;
  return status;
}

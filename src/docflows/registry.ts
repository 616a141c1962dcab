/**
 * The docflow types a batch's rows may be, each a module of its own folder: the one list the
 * pipeline reads them from. A new type is its folder and its line here.
 */
import type { DocflowType } from '../domain/gateway.js';
import type { DocflowKind } from './kind.js';
import { extract } from './extract/index.js';
import { lift } from './lift/index.js';
import { registration } from './registration/index.js';

export type { DocflowKind };

export const KINDS: readonly DocflowKind[] = [registration, lift, extract];

/** A batch of no stated type is of registrations (the product's first type). */
export const DEFAULT_KIND = registration;

/** The type `--type` names: the gateway's name or ours (`lift`); undefined when neither. */
export function kindNamed(name: string): DocflowKind | undefined {
  const key = name.trim().toLowerCase();
  return KINDS.find((kind) => kind.type === key || kind.name === key);
}

/** The type of a batch as stored (its gateway name; '' or absent for a registration). */
export function kindOf(type: string | undefined): DocflowKind {
  if (!type) return DEFAULT_KIND;
  const kind = KINDS.find((k) => k.type === type);
  if (!kind) throw new Error(`docflow type ${type} is not one this version files (${KINDS.map((k) => k.type).join(', ')})`);
  return kind;
}

/**
 * The columns an input of this type is read with beyond the canonical fields: none for a
 * registration (whose agreement columns are canonical), so that its readings and fingerprints
 * stay what they were.
 */
export function readingColumns(kind: DocflowKind | undefined): readonly string[] | undefined {
  return kind && kind !== DEFAULT_KIND ? kind.columns : undefined;
}

/** What `--type` accepts, for a usage error. */
export const KIND_NAMES = KINDS.map((kind) => `${kind.name} (${kind.type})`).join(', ');

export function isDocflowType(type: string): type is DocflowType {
  return KINDS.some((kind) => kind.type === type);
}

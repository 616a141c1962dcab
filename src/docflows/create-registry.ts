/**
 * What the pipeline knows of the docflow types, made from the list of them (registry.ts) and
 * nothing else: finding a type by name, a deal's documents and their copy, and the requestIds'
 * codes. So a new type is its folder and its line in the list; a test may make one of a list
 * with a type of its own (test/unit/docflow-kinds.test.ts).
 */
import type { Deal, RowDocument } from '../domain/deal.js';
import type { DocflowType } from '../domain/gateway.js';
import { formatRequestId, REQUEST_ID_CODE, splitRequestId } from '../realty/request-id.js';
import type { DocflowKind, FollowUpKind } from './kind.js';

/** What a requestId of ours names. */
export interface RequestIdParts {
  bank: string;
  type: DocflowType;
  n: number;
  dealId: string;
}

/** Two types of one name or one code would make one's entries the other's: the list is refused at once. */
function checkUnique(kinds: readonly (DocflowKind | FollowUpKind)[]): void {
  const seen = new Map<string, string>();
  for (const kind of kinds) {
    if (!REQUEST_ID_CODE.test(kind.code)) throw new Error(`docflow type ${kind.type}: its requestId code ${kind.code} must be letters a-z`);
    const names = [`type ${kind.type}`, `code ${kind.code}`, ...('name' in kind ? [`name ${kind.name}`] : [])];
    for (const name of names) {
      const other = seen.get(name);
      if (other !== undefined) throw new Error(`docflow types ${other} and ${kind.type} have the same ${name}`);
      seen.set(name, kind.type);
    }
  }
}

/**
 * The registry of `kinds` (the first is the default: a batch of no stated type) and the
 * follow-ups' types, which have requestIds of ours but no rows.
 */
export function createRegistry(kinds: readonly DocflowKind[], followUps: readonly FollowUpKind[] = []) {
  const defaultKind = kinds[0];
  if (!defaultKind) throw new Error('a registry needs a docflow type');
  checkUnique([...kinds, ...followUps]);

  /** The type `--type` names: the gateway's name or ours (`lift`); undefined when neither. */
  const kindNamed = (name: string): DocflowKind | undefined => {
    const key = name.trim().toLowerCase();
    return kinds.find((kind) => kind.type === key || kind.name === key);
  };

  /** The type of a batch as stored (its gateway name; '' or absent for the default). */
  const kindOf = (type: string | undefined): DocflowKind => {
    if (!type) return defaultKind;
    const kind = kinds.find((k) => k.type === type);
    if (!kind) throw new Error(`docflow type ${type} is not one this version files (${kinds.map((k) => k.type).join(', ')})`);
    return kind;
  };

  /**
   * The columns an input of this type is read with beyond the canonical fields: none for a
   * registration (whose agreement columns are canonical), so that its readings and fingerprints
   * stay what they were.
   */
  const readingColumns = (kind: DocflowKind | undefined): readonly string[] | undefined =>
    kind && kind !== defaultKind ? kind.columns : undefined;

  const isDocflowType = (type: string): type is DocflowType => kinds.some((kind) => kind.type === type);

  /** Each type's code in our requestIds, rows' types first, in the list's order. */
  const codes: Readonly<Partial<Record<DocflowType, string>>> = Object.freeze(
    Object.fromEntries([...kinds, ...followUps].map((kind) => [kind.type, kind.code])),
  );
  const typeOfCode = new Map<string, DocflowType>([...kinds, ...followUps].map((kind) => [kind.code, kind.type]));

  /** The requestId of try `n` of a deal of a type (src/realty/request-id.ts). */
  const requestIdOf = (bank: string, dealId: string, n = 0, type: DocflowType = defaultKind.type): string => {
    const code = codes[type];
    if (code === undefined) throw new Error(`docflow type ${type} has no requestId code in this version`);
    return formatRequestId(bank, code, n, dealId);
  };

  /** The bank, type, try and dealId a requestId of ours names; undefined for anyone else's. */
  const parseRequestId = (requestId: string): RequestIdParts | undefined => {
    const parts = splitRequestId(requestId);
    const type = parts && typeOfCode.get(parts.code);
    return parts && type ? { bank: parts.bank, type, n: parts.n, dealId: parts.dealId } : undefined;
  };

  /** The documents a row applies, in the order they are uploaded: its type's (a deal holds one type's fields). */
  const rowDocuments = (deal: Deal): RowDocument[] => kinds.flatMap((kind) => kind.documents?.(deal) ?? []);

  /** Whether a row names files (the load checks them, a worker uploads them) rather than content ids only. */
  const namesFiles = (deal: Deal): boolean =>
    rowDocuments(deal).some(({ document }) => document.file !== undefined || document.signatureFiles !== undefined);

  /** The deal with its documents' uploaded content ids (one a document, in rowDocuments' order) in place of their files. */
  const withUploaded = (deal: Deal, uploaded: ReadonlyArray<{ contentId: string; signatureIds: string[] }>): Deal => {
    let copy: Deal = { ...deal };
    for (const kind of kinds) if (kind.copy) copy = kind.copy(copy);
    rowDocuments(copy).forEach(({ document }, i) => {
      const ids = uploaded[i];
      if (ids) Object.assign(document, ids);
    });
    return copy;
  };

  return {
    kinds,
    defaultKind,
    kindNamed,
    kindOf,
    readingColumns,
    isDocflowType,
    /** What `--type` accepts, for a usage error. */
    kindNames: kinds.map((kind) => `${kind.name} (${kind.type})`).join(', '),
    codes,
    requestIdOf,
    parseRequestId,
    rowDocuments,
    namesFiles,
    withUploaded,
  };
}

export type Registry = ReturnType<typeof createRegistry>;

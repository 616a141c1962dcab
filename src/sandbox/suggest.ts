/**
 * Cadastre suggest: request checks and matching over the registry. Like the real service
 * it returns candidates, near house numbers included; choosing among them is the client's job.
 */
import { STREET_TYPE_WORDS, typeWordTable } from '../domain/address-words.js';
import type { ApiErrorBody } from '../domain/gateway.js';
import { normaliseName, normaliseNumber } from './register-compare.js';
import type { RegistryObject } from './registry.js';

/** The real service caps its answer; 50 is plenty for one house. */
export const MAX_SUGGESTIONS = 50;

const LEVELS = ['region', 'autonomousCounty', 'district', 'city', 'settlement'] as const;
type Level = (typeof LEVELS)[number];

/** Street-type words a client may leave in the street name ("ул. Ленина", "Мира проспект"): the shared table. */
const STREET_TYPES = typeWordTable(STREET_TYPE_WORDS);
const GLUED_TYPE = /^([^\s.]+)\.(\S+)$/;

interface IndexedObject {
  levels: Partial<Record<Level, string>>;
  streetName: string;
  houseNumber: string;
  apartment: string;
  /** The contract's fields only, serialised once: suggest answers are mostly string joins. */
  json: string;
}

export interface SuggestQuery {
  levels: Partial<Record<Level, string>>;
  street?: string;
  houseNumber?: string;
  room?: string;
}

export function indexRegistry(objects: readonly RegistryObject[]): IndexedObject[] {
  return objects.map((o) => {
    const levels: Partial<Record<Level, string>> = {};
    for (const level of LEVELS) {
      const name = o[level];
      if (name !== undefined && name.trim() !== '') levels[level] = normaliseName(name);
    }
    const response = {
      objectId: o.objectId,
      subjectId: o.subjectId,
      regionId: o.regionId,
      settlementId: o.settlementId,
      srcObject: o.srcObject,
      regionKey: o.regionKey,
      objectCn: o.objectCn,
      street: o.street,
      house: o.house,
      apartment: o.apartment,
      addressNotes: o.addressNotes,
    };
    return {
      levels,
      streetName: normaliseName(o.street.split('|')[0] ?? ''),
      houseNumber: normaliseNumber(o.house.split('|')[0] ?? ''),
      apartment: normaliseNumber(o.apartment),
      json: JSON.stringify(response),
    };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads an optional `{ <field>: string }` part; a wrong shape is a problem, absence is not. */
function readPart(body: Record<string, unknown>, part: string, field: string, problems: ApiErrorBody[]): string | undefined {
  const value = body[part];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) {
    problems.push({ code: 'format', message: `${part} must be an object`, target: part });
    return undefined;
  }
  const inner = value[field];
  if (inner === undefined || inner === null) return undefined;
  if (typeof inner !== 'string') {
    problems.push({ code: 'format', message: `${part}.${field} must be a string`, target: `${part}.${field}` });
    return undefined;
  }
  return inner.trim() === '' ? undefined : inner;
}

/** Checks the request (only region.name is required) and turns it into a normalised query. */
export function parseSuggestQuery(body: unknown): { query: SuggestQuery } | { error: ApiErrorBody } {
  const record = isRecord(body) ? body : {};
  const problems: ApiErrorBody[] = [];
  const levels: Partial<Record<Level, string>> = {};
  const region = isRecord(record.region) ? record.region.name : undefined;
  if (typeof region === 'string' && region.trim() !== '') {
    levels.region = normaliseName(region);
  } else {
    const code = region === undefined || region === null || region === '' ? 'required' : 'format';
    problems.push({ code, message: 'region.name is required and must be a non-empty string', target: 'region.name' });
  }
  for (const level of LEVELS) {
    if (level === 'region') continue;
    const name = readPart(record, level, 'name', problems);
    if (name !== undefined) levels[level] = normaliseName(name);
  }
  const street = readPart(record, 'street', 'name', problems);
  const houseNumber = readPart(record, 'house', 'number', problems);
  readPart(record, 'house', 'buildingNumber', problems);
  readPart(record, 'house', 'sructureNumber', problems);
  const room = readPart(record, 'room', 'number', problems);
  const first = problems[0];
  if (first !== undefined) {
    return {
      error: { code: 'validation', message: first.message, target: first.target, errors: problems },
    };
  }
  const query: SuggestQuery = { levels };
  if (street !== undefined) query.street = stripStreetType(street);
  if (houseNumber !== undefined) query.houseNumber = normaliseNumber(houseNumber);
  if (room !== undefined) query.room = normaliseNumber(room);
  return { query };
}

function isStreetType(token: string): boolean {
  return STREET_TYPES.typeOf(token) !== undefined;
}

export function stripStreetType(name: string): string {
  const tokens = normaliseName(name).split(' ');
  const glued = GLUED_TYPE.exec(tokens[0] ?? '');
  if (glued?.[2] !== undefined && isStreetType(glued[1]!)) tokens[0] = glued[2];
  while (tokens.length > 1 && isStreetType(tokens[0] ?? '')) tokens.shift();
  while (tokens.length > 1 && isStreetType(tokens[tokens.length - 1] ?? '')) tokens.pop();
  return tokens.join(' ');
}

/** `39` matches `39`, `39/1`, `39а`, never `390`: the number, then anything but a digit. */
function houseMatches(objectNumber: string, requested: string): boolean {
  if (!objectNumber.startsWith(requested)) return false;
  const next = objectNumber.charAt(requested.length);
  return next === '' || !/\d/.test(next);
}

function matches(object: IndexedObject, query: SuggestQuery): boolean {
  for (const level of LEVELS) {
    const wanted = query.levels[level];
    if (wanted !== undefined && object.levels[level] !== wanted) return false;
  }
  if (query.street !== undefined && object.streetName !== query.street) return false;
  if (query.houseNumber !== undefined && !houseMatches(object.houseNumber, query.houseNumber)) return false;
  if (query.room !== undefined && object.apartment !== query.room) return false;
  return true;
}

/** The JSON array body of the answer. */
export function suggest(index: readonly IndexedObject[], query: SuggestQuery): string {
  const found: string[] = [];
  for (const object of index) {
    if (matches(object, query)) {
      found.push(object.json);
      if (found.length === MAX_SUGGESTIONS) break;
    }
  }
  return `[${found.join(',')}]`;
}

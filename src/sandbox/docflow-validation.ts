/**
 * What an encumbrance_request must carry, checked the way the gateway does: strict with
 * what the contract requires, liberal with optional and unknown fields (the published
 * example has `"type": "russPasport"` beside documentType and no issuer code). Every
 * problem is listed, not only the first. The checker and the participants' checks serve
 * the other docflow types too (types/), under their own root path.
 */
import { CADASTRAL_NUMBER, type ApiErrorBody } from '../domain/gateway.js';

export interface Problem {
  /** `state`: the docflow a request acts on is not in a state that allows it. */
  code: 'required' | 'format' | 'state';
  message: string;
  target: string;
}

export type Json = Record<string, unknown>;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** The documentation's pattern; no checksum: the public example uses 000-000-000 55. */
const SNILS = /^\d{3}-?\d{3}-?\d{3}\s?\d{2}$/;
const INN = /^\d{10}$/;
const KPP = /^[0-9A-Z]{9}$/;
const OGRN = /^\d{13}$/;
const GENDERS = new Set(['male', 'female']);
export const CADASTRAL_SHAPE = { test: (v: string) => CADASTRAL_NUMBER.test(v), is: 'a cadastral number such as 54:35:000000:5911' };

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isMissing(value: unknown): boolean {
  return value === undefined || value === null;
}

/** `options` at the top level, `options.object` below it. */
function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

export function isCalendarDate(value: string): boolean {
  if (!DATE.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** Collects problems while walking the body; each method returns the value when it is usable. */
export class Checker {
  readonly problems: Problem[] = [];

  required(target: string, message = `${target} is required`): void {
    this.problems.push({ code: 'required', message, target });
  }

  format(target: string, message: string): void {
    this.problems.push({ code: 'format', message, target });
  }

  object(parent: Json | undefined, key: string, path: string): Json | undefined {
    if (parent === undefined) return undefined;
    const value = parent[key];
    const target = join(path, key);
    if (isMissing(value)) this.required(target);
    else if (!isRecord(value)) this.format(target, `${target} must be an object`);
    else return value;
    return undefined;
  }

  /** A required non-empty string, optionally of a given shape. */
  text(parent: Json | undefined, key: string, path: string, shape?: { test(v: string): boolean; is: string }): void {
    if (parent === undefined) return;
    const value = parent[key];
    const target = `${path}.${key}`;
    if (isMissing(value) || value === '') this.required(target);
    else if (typeof value !== 'string' || value.trim() === '') this.format(target, `${target} must be a non-empty string`);
    else if (shape !== undefined && !shape.test(value)) this.format(target, `${target} must be ${shape.is}`);
  }

  date(parent: Json | undefined, key: string, path: string): void {
    this.text(parent, key, path, { test: isCalendarDate, is: 'a date as YYYY-MM-DD' });
  }

  /** A required value out of an enumeration. */
  oneOf(parent: Json | undefined, key: string, path: string, values: readonly string[]): void {
    this.text(parent, key, path, { test: (v) => values.includes(v), is: `one of ${values.join(', ')}` });
  }

  /** A required non-empty array; returns it. */
  list(parent: Json | undefined, key: string, path: string): unknown[] | undefined {
    if (parent === undefined) return undefined;
    const value = parent[key];
    const target = join(path, key);
    if (isMissing(value) || (Array.isArray(value) && value.length === 0)) this.required(target, `${target} must list at least one item`);
    else if (!Array.isArray(value)) this.format(target, `${target} must be an array`);
    else return value as unknown[];
    return undefined;
  }

  /** Structured (region) or by register id (fiasId): one of the two is required. */
  address(parent: Json | undefined, key: string, path: string): void {
    const address = this.object(parent, key, path);
    if (address === undefined) return;
    const target = `${path}.${key}`;
    const hasText = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';
    if (hasText(address.region) || hasText(address.fiasId)) return;
    if (isMissing(address.region) && isMissing(address.fiasId)) {
      this.required(`${target}.region`, `${target}.region or ${target}.fiasId is required`);
    } else {
      this.format(`${target}.region`, `${target}.region or ${target}.fiasId must be a non-empty string`);
    }
  }

  person(parent: Json | undefined, key: string, path: string): void {
    const person = this.object(parent, key, path);
    if (person === undefined) return;
    const at = `${path}.${key}`;
    this.text(person, 'name', at);
    this.text(person, 'surname', at);
    if (!isMissing(person.patronymic) && typeof person.patronymic !== 'string') {
      this.format(`${at}.patronymic`, `${at}.patronymic must be a string`);
    }
    this.date(person, 'dateBirth', at);
    this.text(person, 'birthPlace', at);
    this.text(person, 'snils', at, { test: (v) => SNILS.test(v), is: 'a SNILS of 11 digits, as 000-000-000 00 or 00000000000' });
    this.text(person, 'gender', at, { test: (v) => GENDERS.has(v), is: 'male or female' });
    const doc = this.object(person, 'identityDocument', at);
    const docAt = `${at}.identityDocument`;
    this.text(doc, 'documentType', docAt);
    this.text(doc, 'number', docAt);
    this.date(doc, 'issueDate', docAt);
    this.text(this.object(doc, 'issuer', docAt), 'name', `${docAt}.issuer`);
    this.text(person, 'citizenship', at);
    this.address(person, 'address', at);
  }
}

/** `root`: the options' path, `options` here, `<camelCaseType>.options` for the other types. */
export function checkOwnership(c: Checker, options: Json, root = 'options'): void {
  const whose = c.object(options, 'whoseRightRestricted', root);
  if (whose === undefined) return;
  const at = `${root}.whoseRightRestricted`;
  if (!isMissing(whose.cooperativeOwnership) && isMissing(whose.individualOwnership)) {
    const joint = c.object(whose, 'cooperativeOwnership', at);
    c.person(c.object(joint, 'spouse1', `${at}.cooperativeOwnership`), 'person', `${at}.cooperativeOwnership.spouse1`);
    c.person(c.object(joint, 'spouse2', `${at}.cooperativeOwnership`), 'person', `${at}.cooperativeOwnership.spouse2`);
    return;
  }
  if (isMissing(whose.individualOwnership)) {
    c.required(`${at}.individualOwnership`, `${at} needs individualOwnership.owner or cooperativeOwnership.spouse1 and spouse2`);
    return;
  }
  const single = c.object(whose, 'individualOwnership', at);
  c.person(c.object(single, 'owner', `${at}.individualOwnership`), 'person', `${at}.individualOwnership.owner`);
}

export function checkEncumbrancers(c: Checker, options: Json, root = 'options'): void {
  const who = c.object(options, 'whoUseRestriction', root);
  if (who === undefined) return;
  const at = `${root}.whoUseRestriction.encumbrancer`;
  const list = who.encumbrancer;
  if (isMissing(list) || (Array.isArray(list) && list.length === 0)) {
    c.required(at, `${at} must list at least one encumbrancer`);
    return;
  }
  if (!Array.isArray(list)) {
    c.format(at, `${at} must be an array`);
    return;
  }
  list.forEach((item: unknown, i) => {
    const itemAt = `${at}[${i}]`;
    if (!isRecord(item)) {
      c.format(itemAt, `${itemAt} must be an object`);
      return;
    }
    checkOrganization(c, item, itemAt);
  });
}

/** An organization with its representative: an encumbrancer, or a participant of another docflow. */
export function checkOrganization(c: Checker, item: Json, itemAt: string): void {
  const org = c.object(item, 'organization', itemAt);
  const orgAt = `${itemAt}.organization`;
  c.text(org, 'name', orgAt);
  c.text(org, 'inn', orgAt, { test: (v) => INN.test(v), is: '10 digits' });
  c.text(org, 'kpp', orgAt, { test: (v) => KPP.test(v), is: '9 characters (digits or capital letters)' });
  c.text(org, 'ogrn', orgAt, { test: (v) => OGRN.test(v), is: '13 digits' });
  c.date(org, 'regDate', orgAt);
  c.address(org, 'address', orgAt);
  c.person(c.object(item, 'representative', itemAt), 'person', `${itemAt}.representative`);
}

function checkDocuments(c: Checker, options: Json): void {
  const at = 'options.appliedDocuments';
  const agreement = c.object(c.object(options, 'appliedDocuments', 'options'), 'mortgageAgreement', at);
  const content = c.object(agreement, 'content', `${at}.mortgageAgreement`);
  const contentAt = `${at}.mortgageAgreement.content`;
  const info = c.object(content, 'info', contentAt);
  c.text(c.object(info, 'contentPointer', `${contentAt}.info`), 'id', `${contentAt}.info.contentPointer`);
  const signatures = content?.signatures;
  if (!isMissing(signatures) && !Array.isArray(signatures)) {
    c.format(`${contentAt}.signatures`, `${contentAt}.signatures must be an array`);
  }
}

/** The body's `{requestId?, options}`: the options when they are an object. `root`: where `options` sits. */
export function checkEnvelope(c: Checker, body: unknown, root = ''): Json | undefined {
  if (!isRecord(body)) {
    c.format('body', 'The request body must be a JSON object');
    return undefined;
  }
  const requestId = body.requestId;
  if (!isMissing(requestId) && (typeof requestId !== 'string' || requestId.trim() === '')) {
    c.format('requestId', 'requestId must be a non-empty string when given');
  }
  return c.object(body, 'options', root);
}

/** Every problem of the body, in document order; an empty list means the request is valid. */
export function checkEncumbranceRequest(body: unknown): Problem[] {
  const c = new Checker();
  const options = checkEnvelope(c, body);
  if (options === undefined) return c.problems;
  c.text(options, 'encumbranceType', 'options');
  const object = c.object(options, 'object', 'options');
  c.text(object, 'objectType', 'options.object');
  c.text(object, 'cadastralNumber', 'options.object', CADASTRAL_SHAPE);
  c.address(object, 'address', 'options.object');
  checkOwnership(c, options);
  checkEncumbrancers(c, options);
  checkDocuments(c, options);
  return c.problems;
}

/** The 400 answer for a list of problems. */
export function validationError(problems: readonly Problem[]): ApiErrorBody {
  const inOptions = problems.some((p) => p.target.startsWith('options'));
  return {
    code: 'validation',
    message: 'The request is not valid',
    target: inOptions ? 'options' : (problems[0]?.target ?? 'options'),
    errors: problems.map((p) => ({ ...p })),
  };
}

/** 201 `suspended` with a signature requirement when the agreement carries no signatures. */
export function hasSignatures(body: unknown): boolean {
  if (!isRecord(body) || !isRecord(body.options)) return false;
  const docs = body.options.appliedDocuments;
  const agreement = isRecord(docs) ? docs.mortgageAgreement : undefined;
  const content = isRecord(agreement) ? agreement.content : undefined;
  const signatures = isRecord(content) ? content.signatures : undefined;
  return Array.isArray(signatures) && signatures.length > 0;
}

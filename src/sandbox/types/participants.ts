/**
 * Parts several docflow types share: a participant (a person, or an organization with its
 * representative), an applied document and its content, and the content ids they name.
 */
import { checkOrganization, isMissing, isRecord, type Checker, type Json } from '../docflow-validation.js';
import { at, itemsAt } from './read.js';

/** `{info: {contentPointer: {id}}, signatures?}`: the pointer is required, signatures are optional. */
export function checkContent(c: Checker, content: Json | undefined, path: string): void {
  const info = c.object(content, 'info', path);
  c.text(c.object(info, 'contentPointer', `${path}.info`), 'id', `${path}.info.contentPointer`);
  if (content !== undefined && !isMissing(content.signatures) && !Array.isArray(content.signatures)) {
    c.format(`${path}.signatures`, `${path}.signatures must be an array`);
  }
}

/** An applied document: `{documentType, content}`. */
export function checkAppliedDocument(c: Checker, doc: unknown, path: string, needsType: boolean): void {
  if (!isRecord(doc)) {
    c.format(path, `${path} must be an object`);
    return;
  }
  if (needsType) c.text(doc, 'documentType', path);
  checkContent(c, c.object(doc, 'content', path), `${path}.content`);
}

/** An optional array of applied documents. */
export function checkDocumentList(c: Checker, parent: Json, key: string, path: string, needsType: boolean): void {
  const list = parent[key];
  if (isMissing(list)) return;
  if (!Array.isArray(list)) {
    c.format(`${path}.${key}`, `${path}.${key} must be an array`);
    return;
  }
  list.forEach((doc: unknown, i) => checkAppliedDocument(c, doc, `${path}.${key}[${i}]`, needsType));
}

/** A participant: a person, or an organization with its representative. */
export function checkMember(c: Checker, member: unknown, path: string): void {
  if (isMissing(member)) return c.required(path);
  if (!isRecord(member)) return c.format(path, `${path} must be an object`);
  if (!isMissing(member.organization)) checkOrganization(c, member, path);
  else c.person(member, 'person', path);
}

export const isSigned = (content: unknown): boolean => itemsAt(content, 'signatures').length > 0;

/** The content ids a content names (its pointer and its signatures), each with where. */
export function namedContents(content: unknown, path: string): Array<[string, unknown]> {
  return [
    [`${path}.info.contentPointer.id`, at(content, 'info', 'contentPointer', 'id')],
    ...itemsAt(content, 'signatures').map((s, i): [string, unknown] => [`${path}.signatures[${i}].id`, at(s, 'id')]),
  ];
}

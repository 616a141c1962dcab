/**
 * `cessation_encumbrance_request`: the bank lifts a mortgage (docflow-types.md §1). The
 * registry decides when the docflow would complete, not at its creation: the object must
 * hold a record of that number and date whose encumbrancer is the request's first
 * encumbrancer organization; the record is then removed, so lifting twice ends in `error`.
 */
import type { ApiErrorBody } from '../../domain/gateway.js';
import { dateOf } from '../docflow-record.js';
import {
  CADASTRAL_SHAPE,
  Checker,
  checkEncumbrancers,
  checkEnvelope,
  checkOwnership,
  isMissing,
  isRecord,
  type Json,
  type Problem,
} from '../docflow-validation.js';
import { representativesOf } from '../lifecycle.js';
import { ENCUMBRANCE_TYPES } from '../registry.js';
import { liftNotice } from '../reports.js';
import { checkContent, checkDocumentList, isSigned, namedContents } from './participants.js';
import { at, itemsAt, textAt } from './read.js';
import type { DocflowTypeSpec } from './spec.js';

const TYPE = 'cessation_encumbrance_request';
const ROOT = 'cessationEncumbranceRequest.options';
const REPRESENTATIVE_TYPES = ['authorized', 'confidant'] as const;

/** The documentation's table says an array of objects, its example sends one: either is accepted, the first is lifted. */
function firstObject(body: unknown): unknown {
  const object = at(body, 'options', 'object');
  return Array.isArray(object) ? object[0] : object;
}

function checkObject(c: Checker, object: unknown, path: string): void {
  if (!isRecord(object)) return c.format(path, `${path} must be an object`);
  c.text(object, 'objectType', path);
  c.text(object, 'cadastralNumber', path, CADASTRAL_SHAPE);
  c.address(object, 'address', path);
}

function checkObjects(c: Checker, options: Json): void {
  const path = `${ROOT}.object`;
  const object = options.object;
  if (isMissing(object) || (Array.isArray(object) && object.length === 0)) return c.required(path);
  if (Array.isArray(object)) object.forEach((item: unknown, i) => checkObject(c, item, `${path}[${i}]`));
  else checkObject(c, object, path);
}

/** Not in the documentation's table, in its example, and always sent by the product: checked when given. */
function checkRegistrationRecord(c: Checker, options: Json): void {
  if (isMissing(options.registrationRecord)) return;
  const record = c.object(options, 'registrationRecord', ROOT);
  c.text(record, 'number', `${ROOT}.registrationRecord`);
  c.date(record, 'date', `${ROOT}.registrationRecord`);
}

/** By charter (`authorized`) or by a power of attorney (`confidant`, with `attorney.appliedDocument`). */
function checkRepresentatives(c: Checker, options: Json): void {
  itemsAt(options, 'whoUseRestriction', 'encumbrancer').forEach((item, i) => {
    const representative = at(item, 'representative');
    if (!isRecord(representative)) return;
    const path = `${ROOT}.whoUseRestriction.encumbrancer[${i}].representative`;
    if (!isMissing(representative.representativeType)) c.oneOf(representative, 'representativeType', path, REPRESENTATIVE_TYPES);
    if (representative.representativeType !== 'confidant' && isMissing(representative.attorney)) return;
    const attorney = c.object(representative, 'attorney', path);
    checkContent(c, c.object(attorney, 'appliedDocument', `${path}.attorney`), `${path}.attorney.appliedDocument`);
  });
}

/** Required by one reading of the documentation, optional by another, absent from its example: checked when given. */
function checkAppliedDocuments(c: Checker, options: Json): void {
  if (isMissing(options.appliedDocuments)) return;
  const documents = c.object(options, 'appliedDocuments', ROOT);
  if (documents !== undefined) checkDocumentList(c, documents, 'other', `${ROOT}.appliedDocuments`, false);
}

function check(body: unknown): Problem[] {
  const c = new Checker();
  const options = checkEnvelope(c, body, 'cessationEncumbranceRequest');
  if (options === undefined) return c.problems;
  c.oneOf(options, 'encumbranceType', ROOT, ENCUMBRANCE_TYPES);
  checkObjects(c, options);
  checkRegistrationRecord(c, options);
  checkOwnership(c, options, ROOT);
  checkEncumbrancers(c, options, ROOT);
  checkRepresentatives(c, options);
  checkAppliedDocuments(c, options);
  return c.problems;
}

/** The main documents: each power of attorney, and each of the other applied documents. */
function mainDocuments(body: unknown): Array<{ content: unknown; path: string }> {
  const attorneys = itemsAt(body, 'options', 'whoUseRestriction', 'encumbrancer').flatMap((item, i) => {
    const content = at(item, 'representative', 'attorney', 'appliedDocument');
    const path = `${ROOT}.whoUseRestriction.encumbrancer[${i}].representative.attorney.appliedDocument`;
    return content === undefined ? [] : [{ content, path }];
  });
  const others = itemsAt(body, 'options', 'appliedDocuments', 'other').map((doc, i) => ({
    content: at(doc, 'content'),
    path: `${ROOT}.appliedDocuments.other[${i}].content`,
  }));
  return [...attorneys, ...others];
}

/**
 * 200 when every main document carries a signature; 201 when one does not, or when there
 * is none (a bank's representative by charter with nothing applied: the application is
 * what they sign).
 */
function signed(body: unknown): boolean {
  const documents = mainDocuments(body);
  return documents.length > 0 && documents.every((d) => isSigned(d.content));
}

const refused = (message: string, reason: string): ApiErrorBody => ({
  code: 'registrationRefused',
  message: `The register refused to lift the mortgage: ${message}`,
  context: { reason },
});

export const cessationEncumbranceRequest: DocflowTypeSpec = {
  type: TYPE,
  check,
  contents: (body) => mainDocuments(body).flatMap((d) => namedContents(d.content, d.path)),
  facts(body) {
    const number = textAt(body, 'options', 'registrationRecord', 'number');
    const date = textAt(body, 'options', 'registrationRecord', 'date');
    return {
      cadastralNumber: textAt(firstObject(body), 'cadastralNumber'),
      encumbranceType: textAt(body, 'options', 'encumbranceType'),
      encumbrancerInn: textAt(body, 'options', 'whoUseRestriction', 'encumbrancer', 0, 'organization', 'inn'),
      ...(number === undefined && date === undefined ? {} : { registrationRecord: { number, date } }),
    };
  },
  objectOf(body) {
    const object = firstObject(body);
    return { cadastralNumber: at(object, 'cadastralNumber'), address: at(object, 'address') };
  },
  // The bank lifts its mortgage alone: only its representatives sign.
  signing: { signed, signers: representativesOf },
  // No state duty is due on lifting a mortgage.
  payable: false,
  refusals: [
    refused('the object is under an arrest', 'arrest'),
    { code: 'documentsInvalid', message: 'The register refused to lift the mortgage: the power of attorney does not match the register' },
  ],
  resultIds: 1,
  settle({ registry, at: now }, d) {
    const { cadastralNumber = '', registrationRecord, encumbrancerInn } = d.facts ?? {};
    const number = registrationRecord?.number;
    if (number === undefined) return { error: refused('the request names no registration record of the mortgage', 'noRecordNamed') };
    const record = registry.recordsOf(cadastralNumber).find((r) => r.number === number);
    if (record === undefined) return { error: refused(`the object ${cadastralNumber} holds no mortgage record ${number}`, 'noSuchRecord') };
    if (record.date !== registrationRecord?.date) {
      return {
        error: refused(`the mortgage record ${number} is dated ${record.date}, not ${registrationRecord?.date ?? '(none)'}`, 'dateDiffers'),
      };
    }
    if (record.encumbrancerInn !== encumbrancerInn) {
      return { error: refused(`the mortgage record ${number} is another encumbrancer's`, 'anotherEncumbrancer') };
    }
    registry.remove(cadastralNumber, number);
    const context = { docflowId: d.docflowId, cadastralNumber, date: dateOf(now).slice(0, 10) };
    return { files: [liftNotice(d.plan.resultIds?.[0] ?? `${d.docflowId}-notice`, context, record)] };
  },
};

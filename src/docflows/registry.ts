/**
 * The docflow types a batch's rows may be, each a module of its own folder: the one list the
 * pipeline reads them from. A new type is its folder and its line here; everything the pipeline
 * asks of the types is made from this list (create-registry.ts).
 */
import type { DocflowType } from '../domain/gateway.js';
import { createRegistry } from './create-registry.js';
import type { DocflowKind, FollowUpKind } from './kind.js';
import { extract } from './extract/index.js';
import { lift } from './lift/index.js';
import { registration } from './registration/index.js';

export type { DocflowKind, FollowUpKind };
export type { RequestIdParts } from './create-registry.js';

/** The first is the default: a batch of no stated type is of registrations (the product's first type). */
export const KINDS: readonly DocflowKind[] = [registration, lift, extract];

/** The docflows made on a batch's docflow (src/followups/): a requestId of ours each, no rows. */
export const FOLLOW_UPS: readonly FollowUpKind[] = [
  { type: 'additional_packet_request', code: 'pkt' },
  { type: 'action_request', code: 'act' },
];

const registry = createRegistry(KINDS, FOLLOW_UPS);

export const DEFAULT_KIND: DocflowKind = registry.defaultKind;
/** A row's type when its batch names none. */
export const REGISTRATION: DocflowType = DEFAULT_KIND.type;
/** What `--type` accepts, for a usage error. */
export const KIND_NAMES = registry.kindNames;
/** Each type's code in our requestIds (`<inn>:<code>:<try>:<dealId>`): the kinds' and the follow-ups'. */
export const DOCFLOW_TYPE_CODES = registry.codes;

export const { kindNamed, kindOf, readingColumns, isDocflowType, requestIdOf, parseRequestId, rowDocuments, namesFiles, withUploaded } =
  registry;

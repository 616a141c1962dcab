/**
 * A docflow as the sandbox keeps it, and the views of it the gateway gives: the creation
 * answer, `GET /docflows/{id}` and the news item, and the files it has now.
 */
import type { ApiErrorBody, DocflowRequirements, DocflowResult, DocflowState } from '../domain/gateway.js';
import type { SandboxFile } from './files.js';
import type { DocflowPlan } from './lifecycle.js';

/** A docflow as the gateway shows it: creation answer, `GET /docflows/{id}`, news item. */
export interface DocflowView {
  docflowId: string;
  type: string;
  docflowType: string;
  userId: string;
  state: DocflowState;
  requestId?: string;
  requirements?: DocflowRequirements;
  error?: ApiErrorBody;
  result?: DocflowResult;
  /**
   * While the registry has suspended a `sent` docflow at the applicant's request (an
   * action_request): not the gateway's `suspended`, which means a requirement stands.
   */
  registrySuspension?: { since: string; actionDocflowId: string; message: string };
}

/**
 * What a docflow's completion needs of its request, kept at its creation: no person's data,
 * only the object, a mortgage record, a bank's INN, the docflow acted on.
 */
export interface DocflowFacts {
  cadastralNumber?: string;
  encumbranceType?: string;
  /** The first encumbrancer organization's INN. */
  encumbrancerInn?: string;
  registrationRecord?: { number?: string; date?: string };
  extractType?: string;
  parentDocflowId?: string;
  actionType?: string;
}

/** The registry's answer when a docflow would complete: its result files (each with a signature or none), or an error. */
export type Settlement = { files?: ReadonlyArray<{ file: SandboxFile; signature?: SandboxFile }> } | { error: ApiErrorBody };

export interface StoredDocflow {
  docflowId: string;
  type: string;
  requestId?: string;
  userId: string;
  status: 200 | 201;
  /** Wall-clock ISO date of the creation. */
  createdAt: string;
  plan: DocflowPlan;
  /** A 201 docflow's signature requirement, as created. */
  signatureRequirements?: DocflowRequirements;
  /** Milliseconds between a change and its news item, as set when the docflow was made. */
  newsLagMs: number;
  state: DocflowState;
  requirements?: DocflowRequirements;
  error?: ApiErrorBody;
  result?: DocflowResult;
  paid: boolean;
  /** Application files still waiting for a signature (a 201 docflow's only). */
  unsigned?: Set<string>;
  /** The property as the request named it (`options.object`'s cadastral number and address): no person's data. */
  object?: { cadastralNumber?: unknown; address?: unknown };
  facts?: DocflowFacts;
  /** The result's files and their signatures, once completed. */
  resultFiles?: SandboxFile[];
  /** The registry's suspension at the applicant's request; `stepDropped` once its next step came while held. */
  hold?: { since: string; actionDocflowId: string; stepDropped: boolean };
  /** Steps still queued that a resumption replaced: skipped when they come. */
  staleSteps?: number;
}

/** The wall-clock date of a performance.now() time. */
export function dateOf(at: number): string {
  return new Date(performance.timeOrigin + at).toISOString();
}

/** The docflow as its creation answered it (and dedupe mode answers it again). */
export function creationViewOf(d: StoredDocflow): DocflowView {
  const view: DocflowView = {
    docflowId: d.docflowId,
    type: d.type,
    docflowType: d.type,
    userId: d.userId,
    state: d.status === 200 ? 'queued' : 'suspended',
  };
  if (d.requestId !== undefined) view.requestId = d.requestId;
  if (d.signatureRequirements !== undefined) view.requirements = d.signatureRequirements;
  return view;
}

/** A file the docflow has now: an application, or once completed a result file or its signature. */
export function fileOf(d: StoredDocflow, fileId: string): SandboxFile | undefined {
  const application = d.plan.applications.find((a) => a.file.id === fileId);
  if (application !== undefined) return application.file;
  if (d.state !== 'completed') return undefined;
  return d.resultFiles?.find((f) => f.id === fileId);
}

const SUSPENSION_MESSAGE = "The registry has suspended the processing at the applicant's request";

/** The docflow as it is now, in the gateway's shape. The parts are never changed once made, so sharing them is safe. */
export function viewOf(d: StoredDocflow): DocflowView {
  const view: DocflowView = { docflowId: d.docflowId, type: d.type, docflowType: d.type, userId: d.userId, state: d.state };
  if (d.requestId !== undefined) view.requestId = d.requestId;
  if (d.requirements !== undefined) view.requirements = d.requirements;
  if (d.error !== undefined) view.error = d.error;
  if (d.result !== undefined) view.result = d.result;
  if (d.hold !== undefined) {
    view.registrySuspension = { since: d.hold.since, actionDocflowId: d.hold.actionDocflowId, message: SUSPENSION_MESSAGE };
  }
  return view;
}

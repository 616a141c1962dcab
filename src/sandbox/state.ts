/**
 * Everything the sandbox remembers: docflows and their lives, the requestId and payment
 * indexes, and the counters that let tests prove nothing was submitted twice.
 *
 * Time is performance.now() milliseconds (monotonic: a clock step cannot reorder a life);
 * a date shown to clients is that time on the wall clock. Every change of a docflow's
 * state goes to `onChange` with the time it happened, in that order: the news feed.
 */
import { API_PREFIX, type ApiErrorBody, type DocflowRequirements, type DocflowResult, type DocflowState } from '../realty/types.js';
import type { SandboxFile } from './files.js';
import { StepQueue, type DocflowPlan } from './lifecycle.js';
import type { SandboxDocflow, SandboxStats } from './options.js';

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
}

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
}

export type SendAnswer =
  | { kind: 'sent' }
  /** Nothing to send: the docflow is past its signatures (or never needed any). */
  | { kind: 'nothing' }
  | { kind: 'unsigned'; files: string[] }
  | { kind: 'unpaid'; uin: string };

export type SignAnswer = 'signed' | 'unknown' | 'closed';
export type PayAnswer = { kind: 'paid'; docflow: StoredDocflow } | { kind: 'unknown' } | { kind: 'already' };

function bump(counts: Record<string, number>, key: string): void {
  counts[key] = (counts[key] ?? 0) + 1;
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

/** A file the docflow has now: an application, or once completed the extract and its signature. */
export function fileOf(d: StoredDocflow, fileId: string): SandboxFile | undefined {
  const application = d.plan.applications.find((a) => a.file.id === fileId);
  if (application !== undefined) return application.file;
  if (d.state !== 'completed') return undefined;
  const { extract, extractSignature } = d.plan;
  return extract.id === fileId ? extract : extractSignature.id === fileId ? extractSignature : undefined;
}

/** The docflow as it is now, in the gateway's shape. The parts are never changed once made, so sharing them is safe. */
export function viewOf(d: StoredDocflow): DocflowView {
  const view: DocflowView = { docflowId: d.docflowId, type: d.type, docflowType: d.type, userId: d.userId, state: d.state };
  if (d.requestId !== undefined) view.requestId = d.requestId;
  if (d.requirements !== undefined) view.requirements = d.requirements;
  if (d.error !== undefined) view.error = d.error;
  if (d.result !== undefined) view.result = d.result;
  return view;
}

/** The docflows of one requestId: the first one (what dedupe answers) and how many there are. */
interface RequestIdEntry {
  first: StoredDocflow;
  count: number;
}

export class SandboxState {
  private readonly byId = new Map<string, StoredDocflow>();
  private readonly byRequestId = new Map<string, RequestIdEntry>();
  private readonly byUin = new Map<string, StoredDocflow>();
  private readonly steps = new StepQueue<StoredDocflow>();
  private docflowsCreated = 0;
  private suggestCalls = 0;
  private repeatedRequestIds = 0;
  private requestIdsWithSeveralDocflows = 0;
  private payments = 0;
  private readonly docflowCalls: Record<string, number> = {};
  private readonly operationCalls: Record<string, Record<string, number>> = {};
  private readonly faultsInjected: Record<string, number> = {};
  private readonly docflowStates: Record<string, number> = {};
  /** The sandbox's own url, for the files' contentLink (set once it listens). */
  baseUrl = '';

  constructor(private readonly onChange: (docflow: StoredDocflow, at: number) => void = () => undefined) {}

  /** Docflows created so far. */
  get created(): number {
    return this.docflowsCreated;
  }

  countSuggestCall(): void {
    this.suggestCalls += 1;
  }

  /** One per docflow creation call, keyed by the answer's status (or "reset" / "lost"). */
  countDocflowCall(outcome: number | string): void {
    bump(this.docflowCalls, String(outcome));
  }

  /** One per call of a later operation (`get`, `send`, `signature`, `file`), by status or "reset". */
  countOperationCall(operation: string, outcome: number | string): void {
    bump((this.operationCalls[operation] ??= {}), String(outcome));
  }

  countFault(kind: number | string): void {
    bump(this.faultsInjected, String(kind));
  }

  /**
   * Called once a creation call has passed every check, whatever the requestIds mode: a
   * requestId that already has a docflow counts as a would-be duplicate. Returns the first
   * docflow of that requestId, which dedupe mode answers instead of creating one.
   */
  noteRepeat(requestId: string | undefined): StoredDocflow | undefined {
    if (requestId === undefined) return undefined;
    const entry = this.byRequestId.get(requestId);
    if (entry === undefined) return undefined;
    this.repeatedRequestIds += 1;
    return entry.first;
  }

  /** The link a client downloads a file of a docflow from. */
  fileLink(docflowId: string, fileId: string): string {
    return `${this.baseUrl}${API_PREFIX}/docflows/${docflowId}/files/${fileId}`;
  }

  /** A docflow just created at `now`, in its first state (queued, or suspended for its signers). */
  add(docflow: StoredDocflow, now: number): void {
    this.byId.set(docflow.docflowId, docflow);
    this.docflowsCreated += 1;
    bump(this.docflowStates, docflow.state);
    if (docflow.plan.applications.length > 0) docflow.unsigned = new Set(docflow.plan.applications.map((a) => a.file.id));
    this.onChange(docflow, now);
    if (docflow.state === 'queued') this.steps.push(now + docflow.plan.lifecycleMs, docflow, 'sent');
    if (docflow.requestId === undefined) return;
    const entry = this.byRequestId.get(docflow.requestId);
    if (entry === undefined) {
      this.byRequestId.set(docflow.requestId, { first: docflow, count: 1 });
      return;
    }
    entry.count += 1;
    // Counted once per requestId, on its second docflow: the stat is ids, not docflows.
    if (entry.count === 2) this.requestIdsWithSeveralDocflows += 1;
  }

  private change(
    d: StoredDocflow,
    at: number,
    state: DocflowState,
    parts: Pick<StoredDocflow, 'requirements' | 'error' | 'result'> = {},
  ): void {
    this.docflowStates[d.state] = (this.docflowStates[d.state] ?? 1) - 1;
    bump(this.docflowStates, state);
    d.state = state;
    d.requirements = parts.requirements;
    d.error = parts.error;
    d.result = parts.result;
    if (d.requirements === undefined) delete d.requirements;
    if (d.error === undefined) delete d.error;
    if (d.result === undefined) delete d.result;
    this.onChange(d, at);
  }

  /** Applies every step of every life due at `now`, each at its own time, in time order. */
  advance(now = performance.now()): void {
    for (let step = this.steps.popDue(now); step !== undefined; step = this.steps.popDue(now)) {
      const { docflow: d, at } = step;
      if (step.kind === 'sent') {
        this.change(d, at, 'sent');
        this.steps.push(at + d.plan.lifecycleMs, d, 'settle');
      } else if (d.plan.payment !== undefined && !d.paid) {
        this.byUin.set(d.plan.payment.uin, d);
        this.change(d, at, 'suspended', { requirements: { payment: [d.plan.payment] } });
      } else if (d.plan.error !== undefined) {
        this.change(d, at, 'error', { error: d.plan.error });
      } else {
        this.complete(d, at);
      }
    }
  }

  private complete(d: StoredDocflow, at: number): void {
    const { extract, extractSignature } = d.plan;
    const link = (file: SandboxFile) => ({ id: file.id, type: file.type, contentLink: this.fileLink(d.docflowId, file.id) });
    this.change(d, at, 'completed', { result: { files: [{ ...link(extract), signatures: [link(extractSignature)] }] } });
  }

  get(docflowId: string, now = performance.now()): StoredDocflow | undefined {
    this.advance(now);
    return this.byId.get(docflowId);
  }

  /** A signature posted on a file: only an application file, while its docflow awaits signatures. */
  sign(d: StoredDocflow, fileId: string): SignAnswer {
    const file = fileOf(d, fileId);
    if (file === undefined) return 'unknown';
    if (file.kind !== 'application' || d.state !== 'suspended' || d.requirements?.signature === undefined) return 'closed';
    d.unsigned?.delete(fileId);
    return 'signed';
  }

  /** `POST /docflows/{id}`: a docflow suspended for its signers goes to the queue once every file is signed. */
  send(d: StoredDocflow, now: number): SendAnswer {
    if (d.state === 'suspended' && d.requirements?.payment !== undefined && d.plan.payment !== undefined) {
      return { kind: 'unpaid', uin: d.plan.payment.uin };
    }
    if (d.state !== 'suspended' || d.requirements?.signature === undefined) return { kind: 'nothing' };
    if (d.unsigned !== undefined && d.unsigned.size > 0) return { kind: 'unsigned', files: [...d.unsigned] };
    this.change(d, now, 'queued');
    this.steps.push(now + d.plan.lifecycleMs, d, 'sent');
    return { kind: 'sent' };
  }

  /** `POST /__sandbox/payments/<uin>`: the register learns of the payment and sends the docflow on. */
  pay(uin: string, now = performance.now()): PayAnswer {
    this.advance(now);
    const d = this.byUin.get(uin);
    if (d === undefined) return { kind: 'unknown' };
    if (d.paid) return { kind: 'already' };
    d.paid = true;
    this.payments += 1;
    this.steps.push(now + d.plan.lifecycleMs, d, 'sent');
    return { kind: 'paid', docflow: d };
  }

  docflows(now = performance.now()): SandboxDocflow[] {
    this.advance(now);
    return [...this.byId.values()].map((d) => {
      const out: SandboxDocflow = {
        docflowId: d.docflowId,
        type: d.type,
        state: d.state,
        status: d.status,
        createdAt: d.createdAt,
      };
      if (d.requestId !== undefined) out.requestId = d.requestId;
      if (d.object !== undefined) out.object = d.object;
      if (d.requirements?.signature !== undefined) out.requirement = 'signature';
      if (d.requirements?.payment !== undefined && d.plan.payment !== undefined) {
        out.requirement = 'payment';
        out.uin = d.plan.payment.uin;
      }
      return out;
    });
  }

  stats(now = performance.now()): Omit<SandboxStats, 'logins' | 'loginsRefused' | 'contents'> {
    this.advance(now);
    return {
      docflowsCreated: this.docflowsCreated,
      suggestCalls: this.suggestCalls,
      docflowCalls: { ...this.docflowCalls },
      repeatedRequestIds: this.repeatedRequestIds,
      requestIdsWithSeveralDocflows: this.requestIdsWithSeveralDocflows,
      faultsInjected: { ...this.faultsInjected },
      docflowStates: Object.fromEntries(Object.entries(this.docflowStates).filter(([, n]) => n > 0)),
      operationCalls: Object.fromEntries(Object.entries(this.operationCalls).map(([op, counts]) => [op, { ...counts }])),
      payments: this.payments,
    };
  }
}

/**
 * Everything the sandbox remembers: docflows and their lives, the requestId and payment
 * indexes, and the counters that let tests prove nothing was submitted twice.
 *
 * Time is performance.now() milliseconds (monotonic: a clock step cannot reorder a life);
 * a date shown to clients is that time on the wall clock. Every change of a docflow's
 * state goes to `onChange` with the time it happened, in that order: the news feed.
 */
import { API_PREFIX, type ApiErrorBody, type DocflowState } from '../domain/gateway.js';
import { dateOf, fileOf, type Settlement, type StoredDocflow } from './docflow-record.js';
import type { SandboxFile } from './files.js';
import { StepQueue } from './lifecycle.js';
import type { SandboxDocflow, SandboxStats } from './options.js';

const settleAsRegistration = (d: StoredDocflow): Settlement => ({
  files: [{ file: d.plan.extract, signature: d.plan.extractSignature }],
});

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

  /**
   * `onChange`: every change, for the news feed. `settle`: the registry's answer when a
   * docflow would complete (by default a registration's extract and its signature).
   */
  constructor(
    private readonly onChange: (docflow: StoredDocflow, at: number) => void = () => undefined,
    private readonly settle: (docflow: StoredDocflow, at: number) => Settlement = settleAsRegistration,
  ) {}

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
   * Called once a creation call has passed every check of its body, account and register,
   * whatever the requestIds mode: a requestId that already has a docflow counts as a would-be
   * duplicate (a packet or action refused afterwards for its parent's state included). Returns
   * the first docflow of that requestId, which dedupe mode answers instead of creating one.
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
      if (this.passesOver(d)) continue;
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

  /**
   * Whether a step due now no longer applies: its docflow was cancelled (already final), a
   * resumption queued another in its place, or the registry holds the docflow (the step is
   * dropped; the resumption queues the next).
   */
  private passesOver(d: StoredDocflow): boolean {
    if (d.state === 'completed' || d.state === 'error') return true;
    if (d.state === 'sent' && d.plan.holdSent === true) return true;
    if (d.staleSteps !== undefined && d.staleSteps > 0) {
      d.staleSteps -= 1;
      return true;
    }
    if (d.hold === undefined) return false;
    d.hold.stepDropped = true;
    return true;
  }

  private complete(d: StoredDocflow, at: number): void {
    const settled = this.settle(d, at);
    if ('error' in settled) return this.change(d, at, 'error', { error: settled.error });
    const link = (file: SandboxFile) => ({ id: file.id, type: file.type, contentLink: this.fileLink(d.docflowId, file.id) });
    const files = settled.files ?? [];
    d.resultFiles = files.flatMap(({ file, signature }) => (signature === undefined ? [file] : [file, signature]));
    const result = settled.files && {
      files: files.map(({ file, signature }) => (signature === undefined ? link(file) : { ...link(file), signatures: [link(signature)] })),
    };
    this.change(d, at, 'completed', result === undefined ? {} : { result });
  }

  /** An applicant's cancellation of a docflow in processing: it ends in `error` now. */
  cancel(d: StoredDocflow, now: number, error: ApiErrorBody): void {
    delete d.hold;
    this.change(d, now, 'error', { error });
  }

  /** An applicant's suspension: the docflow stays `sent` and takes no step until resumed. No state changes, so no news item. */
  hold(d: StoredDocflow, now: number, actionDocflowId: string): void {
    d.hold = { since: dateOf(now), actionDocflowId, stepDropped: false };
  }

  /** The resumption: the count to the next step starts again, as after a send or a payment. */
  release(d: StoredDocflow, now: number): void {
    if (d.hold === undefined) return;
    if (!d.hold.stepDropped) d.staleSteps = (d.staleSteps ?? 0) + 1;
    delete d.hold;
    this.steps.push(now + d.plan.lifecycleMs, d, 'settle');
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
      if (d.facts?.parentDocflowId !== undefined) out.parentDocflowId = d.facts.parentDocflowId;
      if (d.hold !== undefined) out.registrySuspended = true;
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

/**
 * Everything the sandbox remembers: docflows, the requestId index and the counters that
 * let tests prove nothing was submitted twice.
 */
import type { SandboxDocflow, SandboxStats } from './options.js';

export interface DocflowAnswer {
  docflowId: string;
  type: string;
  docflowType: string;
  state: 'queued' | 'suspended';
  requestId?: string;
  requirements?: Array<{ type: string }>;
}

export interface StoredDocflow extends SandboxDocflow {
  answer: DocflowAnswer;
}

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
  private docflowsCreated = 0;
  private suggestCalls = 0;
  private repeatedRequestIds = 0;
  private requestIdsWithSeveralDocflows = 0;
  private readonly docflowCalls: Record<string, number> = {};
  private readonly faultsInjected: Record<string, number> = {};

  countSuggestCall(): void {
    this.suggestCalls += 1;
  }

  /** One per docflow creation call, keyed by the answer's status (or "reset" / "lost"). */
  countDocflowCall(outcome: number | string): void {
    bump(this.docflowCalls, String(outcome));
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

  add(docflow: StoredDocflow): void {
    this.byId.set(docflow.docflowId, docflow);
    this.docflowsCreated += 1;
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

  get(docflowId: string): StoredDocflow | undefined {
    return this.byId.get(docflowId);
  }

  docflows(): SandboxDocflow[] {
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
      return out;
    });
  }

  stats(): SandboxStats {
    return {
      docflowsCreated: this.docflowsCreated,
      suggestCalls: this.suggestCalls,
      docflowCalls: { ...this.docflowCalls },
      repeatedRequestIds: this.repeatedRequestIds,
      requestIdsWithSeveralDocflows: this.requestIdsWithSeveralDocflows,
      faultsInjected: { ...this.faultsInjected },
    };
  }
}

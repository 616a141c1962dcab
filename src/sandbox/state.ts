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

export class SandboxState {
  private readonly byId = new Map<string, StoredDocflow>();
  private readonly byRequestId = new Map<string, StoredDocflow>();
  private docflowsCreated = 0;
  private suggestCalls = 0;
  private repeatedRequestIds = 0;
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

  /** The first docflow created for this requestId, counted as a would-be duplicate. */
  takeRepeat(requestId: string | undefined): StoredDocflow | undefined {
    if (requestId === undefined) return undefined;
    const found = this.byRequestId.get(requestId);
    if (found !== undefined) this.repeatedRequestIds += 1;
    return found;
  }

  add(docflow: StoredDocflow): void {
    this.byId.set(docflow.docflowId, docflow);
    if (docflow.requestId !== undefined) this.byRequestId.set(docflow.requestId, docflow);
    this.docflowsCreated += 1;
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
      return out;
    });
  }

  stats(): SandboxStats {
    return {
      docflowsCreated: this.docflowsCreated,
      suggestCalls: this.suggestCalls,
      docflowCalls: { ...this.docflowCalls },
      repeatedRequestIds: this.repeatedRequestIds,
      faultsInjected: { ...this.faultsInjected },
    };
  }
}

/**
 * A batch's rows by docflow state (README, "The life of a deal"), counted as `status`,
 * the scheduler's summary and the dashboard walk its outcomes: how many docflows stand
 * in each state, what the suspended ones wait for, whether every row is final (the batch
 * is `registered`), and the oldest row still on its way.
 */
import { isRowFinal, SUBMITTED_OUTCOMES, type OutcomeRecord, type Requirement } from './types.js';

export interface StateCounts {
  /** Submitted rows per docflow state (`unknown`: a deal another row made, not shown by the feed yet). */
  states: Record<string, number>;
  /** Suspended rows per requirement. */
  waitingFor: Partial<Record<Requirement, number>>;
  /** Every row has its outcome and every docflow reached completed or error. */
  registered: boolean;
  /** The oldest row not final yet: when its docflow was made, and its row. */
  oldestUnfinished?: { row: number; since: string };
}

export interface StateTally {
  add(record: OutcomeRecord): void;
  /** `done`: every row has its outcome (the batch's own verdict). */
  result(done: boolean): StateCounts;
}

export function createStateTally(): StateTally {
  const states: Record<string, number> = {};
  const waitingFor: Partial<Record<Requirement, number>> = {};
  let allFinal = true;
  let oldest: { row: number; since: string; at: number } | undefined;
  return {
    add(record) {
      if (!isRowFinal(record)) allFinal = false;
      if (!SUBMITTED_OUTCOMES.has(record.outcome)) return;
      const state = record.state ?? 'unknown';
      states[state] = (states[state] ?? 0) + 1;
      if (state === 'suspended' && record.requirement) waitingFor[record.requirement] = (waitingFor[record.requirement] ?? 0) + 1;
      if (isRowFinal(record)) return;
      const at = Date.parse(record.finishedAt);
      if (Number.isFinite(at) && (!oldest || at < oldest.at)) oldest = { row: record.row, since: record.finishedAt, at };
    },
    result(done) {
      const counts: StateCounts = { states, waitingFor, registered: done && allFinal };
      if (oldest) counts.oldestUnfinished = { row: oldest.row, since: oldest.since };
      return counts;
    },
  };
}

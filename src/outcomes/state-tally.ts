/**
 * A batch's rows by docflow state (docs/operations.md, "The life of a deal"), counted as `status`,
 * the scheduler's summary and the dashboard walk its outcomes: how many docflows stand
 * in each state, what the suspended ones wait for, whether every row is final (the batch
 * is `registered`), and the oldest row still on its way.
 */
import { DOCFLOW_STATES, isRowFinal, SUBMITTED_OUTCOMES, type OutcomeRecord, type Requirement } from '../domain/outcome.js';

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

/**
 * The docflows' states in one line, in the order of their life, what the suspended ones wait
 * for, and the oldest row still on its way: `sent 12, suspended 3 (payment 2, signature 1),
 * completed 40; oldest unfinished: row 7, since 2026-11-20T01:02:03Z (4d 2h)`.
 */
export function describeStates(status: Omit<StateCounts, 'registered'>, now = Date.now()): string {
  const order = ['unknown', ...DOCFLOW_STATES];
  const parts = Object.entries(status.states)
    .filter(([, n]) => n > 0)
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([state, n]) => {
      if (state === 'unknown') return `not shown by the news feed yet ${n}`;
      const waiting = Object.entries(status.waitingFor).map(([req, k]) => `${req} ${k}`);
      return state === 'suspended' && waiting.length > 0 ? `${state} ${n} (${waiting.join(', ')})` : `${state} ${n}`;
    });
  if (parts.length === 0) return '';
  const oldest = status.oldestUnfinished;
  const age = oldest ? ageOf(now - Date.parse(oldest.since)) : '';
  return `${parts.join(', ')}${oldest ? `; oldest unfinished: row ${oldest.row}, since ${oldest.since} (${age})` : ''}`;
}

/** A finished batch's rows: how many, how many reached the registry (a submitted outcome), and their docflows' states. */
export interface RegistrationCounts {
  total: number;
  filed: number;
  states: Record<string, number>;
}

/**
 * What a batch whose docflows are all final (`registered`) got at the registry, without
 * calling a batch with rows that never reached it registered: `registered` when every row's
 * deal was filed and completed, else `registered 28 of 41; 13 never filed` (and the docflows
 * the registry refused: `2 refused by the registry`).
 */
export function describeRegistered(counts: RegistrationCounts): { text: string; whole: boolean } {
  const completed = counts.states.completed ?? 0;
  const refused = counts.states.error ?? 0;
  const neverFiled = Math.max(0, counts.total - counts.filed);
  if (neverFiled === 0 && refused === 0) return { text: 'registered', whole: true };
  const parts = [`registered ${completed} of ${counts.total}`];
  if (neverFiled > 0) parts.push(`${neverFiled} never filed`);
  if (refused > 0) parts.push(`${refused} refused by the registry`);
  return { text: parts.join('; '), whole: false };
}

/** `4d 2h`, `3h 12m`, `12m`, `40s`. */
function ageOf(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  return m > 0 ? `${m}m` : `${s}s`;
}

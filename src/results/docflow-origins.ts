/**
 * The requestId and type of a row's docflow for the results file, when its outcome does not
 * carry them: an outcome written before they were kept, or a try that ended ERR_UNCERTAIN and
 * learned its docflow later (the feed, or an operator). Read from the database: the `docflows`
 * row the feed made (the requestId it showed), else the ledger entry that names the docflow.
 */
import type { Database } from '../db/database.js';
import { requestIdOf, type DocflowType } from '../ledger/entry.js';
import { SUBMITTED_OUTCOMES, type OutcomeRecord } from '../domain/outcome.js';

/** Per query, at most this many docflows (bound values stay far below both engines' limits). */
const CHUNK = 500;

/** Whether a row names a docflow but not the requestId that made it. */
export function lacksOrigin(record: OutcomeRecord): boolean {
  return !!record.docflowId && record.requestId === undefined && SUBMITTED_OUTCOMES.has(record.outcome);
}

/** The records, those that lack it given their docflow's requestId and type where the database knows them. */
export async function withOrigins(db: Database, records: OutcomeRecord[]): Promise<OutcomeRecord[]> {
  const wanted = [...new Set(records.filter(lacksOrigin).map((r) => r.docflowId!))];
  if (wanted.length === 0) return records;
  const found = new Map<string, { requestId: string; type: string }>();
  for (let from = 0; from < wanted.length; from += CHUNK) {
    const ids = wanted.slice(from, from + CHUNK);
    const seen = await db.kysely
      .selectFrom('docflows')
      .select(['docflow_id', 'request_id', 'type'])
      .where('docflow_id', 'in', ids)
      .execute();
    for (const d of seen) found.set(d.docflow_id, { requestId: d.request_id, type: d.type });
    const rest = ids.filter((id) => !found.has(id));
    if (rest.length === 0) continue;
    const entries = await db.kysely
      .selectFrom('ledger')
      .select(['docflow_id', 'bank', 'type', 'deal_id', 'n'])
      .where('docflow_id', 'in', rest)
      .execute();
    for (const e of entries)
      found.set(e.docflow_id!, { requestId: requestIdOf(e.bank, e.deal_id, e.n, e.type as DocflowType), type: e.type });
  }
  return records.map((r) => {
    const origin = lacksOrigin(r) ? found.get(r.docflowId!) : undefined;
    return origin ? { ...r, ...origin } : r;
  });
}

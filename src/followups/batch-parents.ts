/**
 * What a follow-up command needs of a batch: its rows' docflows (the parents), the bank as a
 * participant (from the batch's profile), and the owners of chosen rows read from the input
 * again, as the load read them (no store keeps personal data).
 */
import type { BatchMeta } from '../batch/batch-store.js';
import { encumbrancerOf, toPerson } from '../docflows/parties.js';
import { kindOf } from '../docflows/registry.js';
import type { Database } from '../db/database.js';
import type { BankProfile } from '../input/profile.js';
import { reopenInput } from '../input/reading-options.js';
import { createDealValidator } from '../input/validate-deal.js';
import { batchOutcomes } from '../outcomes/batch-outcomes.js';
import { SUBMITTED_OUTCOMES } from '../domain/outcome.js';
import type { Organization, Participant, Person } from '../domain/gateway.js';
import type { RedisClient as Redis } from '../redis/connection.js';
import type { Keys } from '../redis/keys.js';

/** A row of the batch: its deal and, once it reached the registry, its docflow. */
export interface ParentRow {
  row: number;
  dealId: string;
  outcome: string;
  docflowId?: string;
}

/** A participant who asks: a person, or the bank (an organization with its representative). */
export type Member = Participant | { organization: Organization; representative: { representativeType: string; person: Person } };

/** Every row of the batch, in input order, with its docflow when it has one. */
export async function batchParents(redis: Redis, keys: Keys, db: Database, batch: string, total: number): Promise<ParentRow[]> {
  const rows: ParentRow[] = [];
  for await (const r of batchOutcomes(redis, keys, db, batch, total)) {
    const row: ParentRow = { row: r.row, dealId: r.dealId, outcome: r.outcome };
    if (r.docflowId && SUBMITTED_OUTCOMES.has(r.outcome)) row.docflowId = r.docflowId;
    rows.push(row);
  }
  return rows;
}

/** The bank as a docflow member: its organization and representative, as its profile gives them. */
export function bankMember(profile: BankProfile): Member {
  return encumbrancerOf(profile).encumbrancer[0]!;
}

/**
 * The owners of the chosen rows, as participants, read from the batch's input (checked to be the
 * file it was loaded from) and validated as the load did, every record in order (so a repeated
 * dealId stays what it was). A row that no longer validates has none.
 */
export async function ownersOfRows(
  meta: BatchMeta,
  input: string | undefined,
  rows: ReadonlySet<number>,
): Promise<Map<number, Participant[]>> {
  const owners = new Map<number, Participant[]>();
  if (rows.size === 0) return owners;
  const file = await reopenInput(meta, input);
  const validate = createDealValidator({ own: kindOf(meta.type).own });
  for await (const record of file.records()) {
    const result = validate(record.fields);
    if (rows.has(record.row) && result.ok && record.problems.length === 0)
      owners.set(
        record.row,
        result.deal.owners.map((o) => ({ person: toPerson(o) })),
      );
  }
  return owners;
}

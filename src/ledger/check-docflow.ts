/**
 * Before an operator's `ledger <dealId> --resolve <docflowId>` is written: the gateway is
 * asked (`GET /docflows/{id}`) that the docflow exists and carries the requestId of the deal's
 * try waiting for an answer. An operator's guess never names a docflow the gateway does not
 * have, nor another deal's or another try's; the docflow's state is the gateway's, not typed.
 */
import { ApiHttpError, UsageError } from '../errors.js';
import type { RealtyClient } from '../realty/client.js';
import type { LedgerEntry } from './entry.js';

export interface CheckedDocflow {
  /** The row's outcome the docflow gives: `suspended` when it waits (as its creation would have answered 201), else `queued`. */
  outcome: 'queued' | 'suspended';
  /** Its state at the gateway now. */
  state: string;
}

export async function checkDocflowOfTry(
  client: Pick<RealtyClient, 'getDocflow'>,
  entry: LedgerEntry,
  docflowId: string,
): Promise<CheckedDocflow> {
  const docflow = await client.getDocflow(docflowId).catch((err: unknown) => {
    if (err instanceof ApiHttpError && err.status === 404)
      throw new UsageError(`The gateway has no docflow ${docflowId}; nothing was changed (is the id copied whole?).`);
    throw err;
  });
  if (docflow.requestId === undefined)
    throw new UsageError(
      `The gateway's docflow ${docflowId} carries no requestId, so it cannot be told to be deal ${entry.dealId}'s; nothing was changed.`,
    );
  if (docflow.requestId !== entry.requestId)
    throw new UsageError(
      `Docflow ${docflowId} carries requestId ${docflow.requestId}, not ${entry.requestId} of deal ${entry.dealId}'s try waiting for an answer; nothing was changed.`,
    );
  return { outcome: docflow.state === 'suspended' ? 'suspended' : 'queued', state: docflow.state };
}

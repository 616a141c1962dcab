/**
 * The docflow an additional_packet_request or action_request acts on: it must exist, be the
 * same account's and be in processing at the registry (`sent`). That the gateway answers 400
 * otherwise is our assumption, not the documentation's (docflow-types.md §3).
 */
import type { StoredDocflow } from '../docflow-record.js';
import type { Problem } from '../docflow-validation.js';
import type { CreationContext } from './spec.js';

export function findParent(ctx: CreationContext, docflowId: string | undefined): StoredDocflow | undefined {
  const parent = docflowId === undefined ? undefined : ctx.state.get(docflowId, ctx.now);
  // Another account's docflow is answered as an unknown one: its existence is not theirs to learn.
  return parent?.userId === ctx.userId ? parent : undefined;
}

export function checkParent(ctx: CreationContext, docflowId: string | undefined, target: string): Problem | undefined {
  const parent = findParent(ctx, docflowId);
  if (parent === undefined) return { code: 'state', message: 'This account has no docflow with this id', target };
  if (parent.state !== 'sent') {
    return {
      code: 'state',
      message: `The docflow is ${parent.state}: it is acted on only while in processing at the registry (sent)`,
      target,
    };
  }
  return undefined;
}

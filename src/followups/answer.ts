/**
 * `realty-batch answer <batch> --dir <d>`: more documents for the batch's docflows in processing.
 * Each `<d>/<dealId>/` folder's files go as one `additional_packet_request` on behalf of the bank,
 * only to a docflow the gateway shows `sent`; every other deal of the batch (no folder, no
 * docflow, not `sent`, a folder's problem) and every folder of no deal gets one line saying why
 * not. The same files for the same docflow go once (followup-ledger.ts): run again, nothing is
 * sent again. The lines go to a small CSV as well (`answers.csv`).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { recordAction } from '../db/operator-actions.js';
import { SessionRefusedError } from '../errors.js';
import { maskRegistryText } from '../feed/item-status.js';
import type { Logger } from '../logger.js';
import type { BankProfile } from '../input/profile.js';
import { withGatewayRetry, type GatewayRetryOptions } from '../realty/gateway-retry.js';
import { eachLimit, safeName } from '../results/docflow-files.js';
import { bankMember, type ParentRow } from './batch-parents.js';
import { packetKey } from './followup-ledger.js';
import { readPacketFolder, uploadDocument } from './packet-files.js';
import { earlierFollowUp, sendFollowUp, type SendContext } from './send-follow-up.js';

/** How a deal's line ends: a packet sent now or before, or why none was. */
export type AnswerResult = 'sent' | 'sent_before' | 'skipped' | 'refused' | 'lost' | 'waiting';

export interface AnswerLine {
  /** The deal's row (its first with a docflow); 0 for a folder of no deal of the batch. */
  row: number;
  dealId: string;
  /** The docflow the packet is for. */
  docflowId: string;
  packetDocflowId: string;
  /** The packet's state: the gateway's answer, or the news feed's once it showed it. */
  packetState: string;
  result: AnswerResult;
  reason: string;
}

export const ANSWER_COLUMNS = ['row', 'dealId', 'docflowId', 'packetDocflowId', 'packetState', 'result', 'reason'] as const;

export interface AnswerOptions extends SendContext {
  batch: string;
  /** The bank: its profile's INN, and the profile (the member that sends the packet). */
  bank: string;
  profile: BankProfile;
  parents: readonly ParentRow[];
  dir: string;
  baseUrl: string;
  operator: string;
  concurrency?: number;
  retry?: GatewayRetryOptions;
  logger?: Logger;
}

/** The deal folders under `dir`, by name. */
async function dealFolders(dir: string): Promise<Set<string>> {
  const entries = await readdir(dir, { withFileTypes: true });
  return new Set(entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name));
}

export async function answerBatch(o: AnswerOptions): Promise<AnswerLine[]> {
  const folders = await dealFolders(o.dir);
  // One line a deal, at its first row with a docflow (rows of one deal share it), else its first row.
  const deals = new Map<string, ParentRow>();
  for (const p of o.parents) {
    const known = deals.get(p.dealId);
    if (p.dealId !== '' && (!known || (!known.docflowId && p.docflowId))) deals.set(p.dealId, p);
  }
  const lines: AnswerLine[] = [];
  const line = (
    p: Pick<ParentRow, 'row' | 'dealId'> & { docflowId?: string | undefined },
    result: AnswerResult,
    reason: string,
    packet = { id: '', state: '' },
  ) =>
    lines.push({
      row: p.row,
      dealId: p.dealId,
      docflowId: p.docflowId ?? '',
      packetDocflowId: packet.id,
      packetState: packet.state,
      result,
      reason,
    });
  const ofDeal = new Set([...deals.keys()].map(safeName));
  for (const name of folders)
    if (!ofDeal.has(name)) line({ row: 0, dealId: name }, 'skipped', `the folder ${name} names no deal of batch ${o.batch}: nothing sent`);

  const retry = { ...o.retry, onRetry: (err: Error) => o.logger?.warn({ err: { message: err.message } }, 'a call is tried again') };
  const one = async (p: ParentRow): Promise<void> => {
    const name = safeName(p.dealId);
    if (!folders.has(name)) return void line(p, 'skipped', 'no folder of more documents');
    if (!p.docflowId) return void line(p, 'skipped', `the deal has no docflow (its row is ${p.outcome}): nothing sent`);
    const folder = await readPacketFolder(join(o.dir, name));
    if (!folder.ok) return void line(p, 'refused', `${folder.problem}: nothing sent`);
    const key = packetKey(o.bank, p.docflowId, folder.sha256);
    const earlier = await earlierFollowUp(o, key);
    if (earlier?.kind === 'before')
      return void line(p, 'sent_before', `these files were sent before (${earlier.at}): nothing sent again`, {
        id: earlier.docflowId,
        state: '',
      });
    if (earlier?.kind === 'lost') return void line(p, 'lost', earlier.reason);
    const parent = await withGatewayRetry(() => o.client.getDocflow(p.docflowId!), retry);
    if (parent.state !== 'sent')
      return void line(
        p,
        'skipped',
        `its docflow is ${parent.state}: more documents go only to a docflow in processing at the registry (sent)`,
      );
    const documents = [];
    for (const f of folder.files) documents.push(await uploadDocument(o.client, o.baseUrl, f, o.timeoutMs, retry));
    const options = { docflowId: p.docflowId, additionalDocuments: [{ docflowMember: bankMember(o.profile), documents }] };
    const sent = await sendFollowUp(o, key, { batch: o.batch, row: p.row }, options);
    if (sent.kind === 'sent') {
      line(p, 'sent', `${folder.files.length} ${folder.files.length === 1 ? 'file' : 'files'} sent`, {
        id: sent.docflowId,
        state: sent.state,
      });
      await recordAction(o.db, {
        who: o.operator,
        action: 'answer',
        batch: o.batch,
        dealId: p.dealId,
        detail: `additional packet ${sent.docflowId} (${folder.files.length} files, sha256 ${folder.sha256}) for docflow ${p.docflowId}`,
      });
    } else if (sent.kind === 'before')
      line(p, 'sent_before', `these files were sent before (${sent.at}): nothing sent again`, { id: sent.docflowId, state: '' });
    else {
      line(p, sent.kind, sent.reason);
      // A request that went out is audited whatever its answer: refused by the gateway, or lost on the way back.
      if (sent.kind === 'lost' || sent.kind === 'refused')
        await recordAction(o.db, {
          who: o.operator,
          action: 'answer',
          batch: o.batch,
          dealId: p.dealId,
          detail: `additional packet (${folder.files.length} files, sha256 ${folder.sha256}) for docflow ${p.docflowId}: ${sent.kind === 'lost' ? 'its answer was lost' : 'refused by the gateway'}`,
        });
    }
  };
  await eachLimit([...deals.values()], o.concurrency ?? 4, async (p) => {
    try {
      await one(p);
    } catch (err) {
      if (err instanceof SessionRefusedError) throw err;
      // The gateway's text may echo a person: masked as a results file's would be.
      line(p, 'refused', `${maskRegistryText((err as Error).message)}: nothing sent`);
    }
  });
  return lines.sort((a, b) => a.row - b.row || a.dealId.localeCompare(b.dealId));
}

/** The packets' states as the news feed shows them now, where it has shown them. */
export function withFeedStates(lines: AnswerLine[], states: ReadonlyMap<string, string>): AnswerLine[] {
  return lines.map((l) => (l.packetDocflowId && states.has(l.packetDocflowId) ? { ...l, packetState: states.get(l.packetDocflowId)! } : l));
}

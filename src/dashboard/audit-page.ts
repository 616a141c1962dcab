/**
 * `/audit`: who did what, when, newest first: the command line's `ledger --resolve`, `retry`,
 * `track --reset-cursor`, `schedule add/remove` (who: `--operator` or the OS user) and the
 * dashboard's own actions (who: its login). Paged by `?before=<id>`, of one deal with
 * `?dealId=`; `?format=json` (or
 * `Accept: application/json`) for scripts. The actions hold ids and counts, never persons.
 */
import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';
import { ACTIONS_LIMIT, auditPage, MAX_QUERY_LENGTH, type AuditPage } from '../ledger/history.js';
import { escapeHtml } from './batches-page.js';
import { actionsTable, AUDIT_PATH, PageError, pageErrorHandler, pageHtml, sendPage, wantsJson, type NavPaths } from './deals-page.js';

export const BAD_BEFORE = 'before must be the number of an operator action (the # column).';
export const BAD_DEAL = `dealId must be one dealId of at most ${MAX_QUERY_LENGTH} characters.`;

export interface AuditView {
  /** The first page (no `before`). */
  first: boolean;
  limit: number;
  /** Only the actions naming this dealId. */
  dealId?: string | undefined;
}

/** The address of an audit page, with its filter. */
function auditPath(view: AuditView, before?: number): string {
  const params = new URLSearchParams();
  if (view.dealId !== undefined) params.set('dealId', view.dealId);
  if (before !== undefined) params.set('before', String(before));
  const query = params.toString();
  return query ? `${AUDIT_PATH}?${query}` : AUDIT_PATH;
}

export function renderAuditPage(page: AuditPage, nav: NavPaths, view: AuditView): string {
  const older =
    page.next === null
      ? '<p class="muted">No older action.</p>'
      : `<p><a href="${escapeHtml(auditPath(view, page.next))}">Older actions</a></p>`;
  const newest = view.first ? '' : `<p><a href="${escapeHtml(auditPath(view))}">Newest actions</a></p>`;
  const filter =
    view.dealId === undefined
      ? ''
      : `<p>Only the actions naming dealId <code>${escapeHtml(view.dealId)}</code> (<a href="${AUDIT_PATH}">every action</a>).</p>`;
  const intro = `<p class="muted">Operator actions, newest first, ${escapeHtml(view.limit)} a page: the command line's (who: <code>--operator</code>, else the OS user) and this page's own (who: its login; <code>anonymous</code> with <code>--no-auth</code>). Times are UTC.</p>`;
  const table = page.actions.length ? actionsTable(page.actions) : '<p>No operator action recorded yet.</p>';
  return pageHtml('operator actions', `${intro}\n${filter}\n${newest}\n${table}\n${older}`, nav);
}

export interface AuditRoutesOptions extends NavPaths {
  db: Database;
  logger?: Logger;
}

type AuditQuery = { Querystring: { before?: unknown; dealId?: unknown; format?: unknown } };

export function auditRoutes(options: AuditRoutesOptions) {
  const { db, logger } = options;
  const nav: NavPaths = { boardPath: options.boardPath, batchesPath: options.batchesPath };
  // eslint-disable-next-line @typescript-eslint/require-await -- fastify waits for a plugin that is an async function
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(pageErrorHandler(logger));

    app.get<AuditQuery>(AUDIT_PATH, async (request, reply) => {
      const json = wantsJson(request);
      const { before, dealId } = request.query;
      if (before !== undefined && (typeof before !== 'string' || !/^[1-9]\d{0,15}$/.test(before))) throw new PageError(400, BAD_BEFORE);
      if (dealId !== undefined && (typeof dealId !== 'string' || dealId === '' || dealId.length > MAX_QUERY_LENGTH))
        throw new PageError(400, BAD_DEAL);
      const page = await auditPage(db, {
        ...(before !== undefined && { before: Number(before) }),
        ...(dealId !== undefined && { dealId }),
        limit: ACTIONS_LIMIT,
      });
      const view: AuditView = { first: before === undefined, limit: ACTIONS_LIMIT, dealId };
      return sendPage(reply, json, page, () => renderAuditPage(page, nav, view));
    });
  };
}

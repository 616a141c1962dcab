/**
 * `/deals`: a deal found by its dealId, a docflowId or its cadastral number across every
 * batch, and `/deals/<bank>/<type>/<dealId>`: its history (its claim and tries in the ledger,
 * every docflow it made with the states the news feed showed, the operators' actions on it).
 * Server-rendered HTML, no script; every value passes through `escapeHtml`. Only the database
 * is read (src/ledger/history.ts): nothing of a job in Redis, whose data holds persons.
 * `?format=json` (or `Accept: application/json`) answers the same as JSON, for scripts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../db/database.js';
import type { RecordedAction } from '../db/operator-actions.js';
import type { Logger } from '../logger.js';
import {
  dealHistory,
  MAX_QUERY_LENGTH,
  searchDeals,
  type DealHistory,
  type DealMatch,
  type DealSearch,
  type DocflowView,
  type LedgerView,
  type MatchedBy,
} from '../ledger/history.js';
import { escapeHtml } from './batches-page.js';

export const DEALS_PATH = '/deals';
export const AUDIT_PATH = '/audit';

/** Fixed sentences: an answer that repeated the request would let a link put any text on this origin. */
export const BAD_PAGE_FORMAT = 'The format must be html or json.';
export const BAD_QUERY = `Give one dealId, docflowId or cadastral number of at most ${MAX_QUERY_LENGTH} characters as q.`;
export const NO_SUCH_DEAL = 'The database knows nothing of that deal: neither a ledger entry nor a docflow.';

/** An answer other than 200, with its one fixed sentence. */
export class PageError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

/** The navigation every page of ours shows. */
export interface NavPaths {
  boardPath: string;
  batchesPath: string;
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1c2128;background:#f6f8fa}
h1{font-size:1.3rem;margin:0 0 .5rem}
h2{font-size:1.1rem;margin:1.5rem 0 .25rem}
nav a{margin-right:1rem}
form{margin:1rem 0}
input[type=search]{width:28rem;max-width:90%;padding:.3rem}
table{border-collapse:collapse;background:#fff;margin-top:.5rem;width:100%}
th,td{border:1px solid #d0d7de;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eaeef2}
table.kv th{width:14rem}
ul{margin:0;padding-left:1.1rem}
.attention{color:#9a3412;font-weight:600}
.muted{color:#57606a;font-size:.9em}
code{font-size:.95em}
`;

/** A whole page of ours: the same head, style and navigation as the batches page. */
export function pageHtml(title: string, body: string, nav: NavPaths): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>realty-batch: ${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>realty-batch: ${escapeHtml(title)}</h1>
<nav><a href="${escapeHtml(nav.batchesPath)}">Batches</a><a href="${DEALS_PATH}">Find a deal</a><a href="${AUDIT_PATH}">Operator actions</a><a href="${escapeHtml(nav.boardPath)}">Queue (Bull Board)</a><a href="/metrics">Metrics</a></nav>
${body}
</body>
</html>
`;
}

/** JSON for `?format=json`, or an `Accept` naming JSON and not HTML (a browser names HTML). */
export function wantsJson(request: FastifyRequest): boolean {
  const { format } = (request.query ?? {}) as { format?: unknown };
  if (format !== undefined && format !== 'html' && format !== 'json') throw new PageError(400, BAD_PAGE_FORMAT);
  if (format !== undefined) return format === 'json';
  const accept = request.headers.accept ?? '';
  return /\bapplication\/json\b/i.test(accept) && !/\btext\/html\b/i.test(accept);
}

/** The answer in the form asked for; never cached (it is the state of the system of record). */
export function sendPage(reply: FastifyReply, json: boolean, data: unknown, html: () => string): FastifyReply {
  void reply.header('cache-control', 'no-store').header('vary', 'Accept');
  return json
    ? reply.type('application/json; charset=utf-8').send(JSON.stringify(data))
    : reply.type('text/html; charset=utf-8').send(html());
}

/** The page's error answers: its fixed sentence, as text or as `{ error }`. */
export function pageErrorHandler(logger: Logger | undefined) {
  return (err: Error, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const json = /\bformat=json\b/.test(request.url) || /\bapplication\/json\b/i.test(request.headers.accept ?? '');
    const send = (status: number, message: string) =>
      json
        ? reply
            .code(status)
            .type('application/json; charset=utf-8')
            .send(JSON.stringify({ error: message }))
        : reply.code(status).type('text/plain; charset=utf-8').send(`${message}\n`);
    if (err instanceof PageError) return send(err.status, err.message);
    logger?.error({ err: { message: err.message } }, 'dashboard page failed');
    return send(503, 'The dashboard could not read the database (see its log).');
  };
}

/** The operator actions naming one dealId. */
export const auditOf = (dealId: string): string => `${AUDIT_PATH}?dealId=${encodeURIComponent(dealId)}`;

/** The address of a deal's history. */
export function dealPath(d: { bank: string; type: string; dealId: string }): string {
  return `${DEALS_PATH}/${encodeURIComponent(d.bank)}/${encodeURIComponent(d.type)}/${encodeURIComponent(d.dealId)}`;
}

/** A cell: the value as text, or a muted dash when there is none. */
const cell = (value: unknown): string =>
  value === null || value === undefined || value === '' ? '<span class="muted">—</span>' : escapeHtml(value);
const code = (value: unknown): string =>
  value === null || value === undefined || value === '' ? '<span class="muted">—</span>' : `<code>${escapeHtml(value)}</code>`;

const MATCHED: Record<MatchedBy, string> = { dealId: 'dealId', docflowId: 'docflow', cadastralNumber: 'cadastral number' };

function matchRow(m: DealMatch): string {
  const where = m.batch === null ? null : m.batch === '' ? 'the news feed (no row)' : `${m.batch}, row ${m.row ?? ''}`;
  return `<tr>
<td><code>${escapeHtml(m.bank)}</code></td>
<td>${escapeHtml(m.type)}</td>
<td><a href="${escapeHtml(dealPath(m))}"><code>${escapeHtml(m.dealId)}</code></a></td>
<td>${m.state === null ? '<span class="muted">not in the ledger</span>' : escapeHtml(m.state)}</td>
<td>${cell(m.n)}</td>
<td>${code(m.docflowId)}</td>
<td>${cell(where)}</td>
<td>${cell(m.at)}</td>
<td>${cell(m.via)}</td>
<td class="muted">${escapeHtml(m.matchedBy.map((b) => MATCHED[b]).join(', '))}</td>
</tr>`;
}

export function renderSearchPage(search: DealSearch, nav: NavPaths): string {
  const form = `<form method="get" action="${DEALS_PATH}">
<input type="search" name="q" value="${escapeHtml(search.q)}" maxlength="${MAX_QUERY_LENGTH}" placeholder="dealId, docflowId or cadastral number" aria-label="dealId, docflowId or cadastral number" autofocus>
<button type="submit">Find</button>
</form>`;
  const actions =
    search.actions > 0
      ? `<p><a href="${escapeHtml(auditOf(search.q))}">${escapeHtml(search.actions)} operator action${search.actions === 1 ? '' : 's'}</a> name this dealId.</p>`
      : '';
  let results: string;
  if (search.q === '') {
    results = `<p class="muted">A deal is found in the ledger of every batch by its dealId, by a docflowId it made (also one a resubmission replaced), or by its cadastral number.</p>`;
  } else if (search.matches.length === 0) {
    results = '<p>No deal in the database has that dealId, docflowId or cadastral number.</p>';
  } else {
    const cut = search.cut
      ? `<p class="attention">More than ${escapeHtml(search.limit)} deals match: the first ${escapeHtml(search.limit)} by bank, type and dealId are listed.</p>`
      : '';
    results = `${cut}<table>
<thead><tr><th>bank</th><th>type</th><th>dealId</th><th>state</th><th>try</th><th>docflow</th><th>batch, row</th><th>known at</th><th>via</th><th>matched by</th></tr></thead>
<tbody>
${search.matches.map(matchRow).join('\n')}
</tbody>
</table>`;
  }
  return pageHtml('find a deal', `${form}\n${results}\n${actions}`, nav);
}

const kv = (rows: ReadonlyArray<[string, string]>): string =>
  `<table class="kv"><tbody>\n${rows.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${v}</td></tr>`).join('\n')}\n</tbody></table>`;

function ledgerSection(ledger: LedgerView | null): string {
  if (!ledger)
    return '<p class="muted">The ledger has no entry for this deal: never claimed, released without a docflow, or pruned past its days.</p>';
  const prev = ledger.prev;
  return kv([
    ['state', escapeHtml(ledger.state)],
    ['try', `${escapeHtml(ledger.n)} <span class="muted">(requestId ${code(ledger.requestId)})</span>`],
    ['held by', ledger.batch === '' ? 'the news feed (no row)' : `batch ${code(ledger.batch)}, row ${escapeHtml(ledger.row)}`],
    ['job', code(ledger.job)],
    ['try began', cell(ledger.tryAt)],
    ['try ends', cell(ledger.endAt)],
    ['time-out, feed lag allowed', `${cell(ledger.timeoutMs)} ms, ${cell(ledger.lagMs)} ms`],
    ['docflow', code(ledger.docflowId)],
    ['gateway answer', cell(ledger.outcome)],
    ['known at', cell(ledger.at)],
    ['via', cell(ledger.via)],
    ['cadastral number', code(ledger.cadastralNumber)],
    [
      'docflow a resubmission replaces',
      prev
        ? `${code(prev.docflowId)} (try ${escapeHtml(prev.n)}, ${escapeHtml(prev.outcome)}, batch ${code(prev.batch)} row ${escapeHtml(prev.row)}, ${escapeHtml(prev.at)} via ${escapeHtml(prev.via)})`
        : cell(null),
    ],
    ['last change', cell(ledger.updatedAt)],
  ]);
}

function docflowRow(d: DocflowView): string {
  const states = d.history.length
    ? `<ul>${d.history.map((h) => `<li>${escapeHtml(h.state)} <span class="muted">${escapeHtml(h.at)}, seen ${escapeHtml(h.seenAt ?? '')}</span></li>`).join('')}</ul>`
    : cell(null);
  const requirement = d.requirement
    ? `${escapeHtml(d.requirement)} <span class="muted">since ${escapeHtml(d.requirementAt ?? '')}</span>`
    : cell(null);
  const payment = d.paymentUin || d.paymentAmount ? `${code(d.paymentUin)} ${cell(d.paymentAmount)}` : cell(null);
  return `<tr>
<td>${code(d.docflowId)}</td>
<td>${escapeHtml(d.n)} <div class="muted">${escapeHtml(d.requestId)}</div></td>
<td>${cell(d.state)} <div class="muted">${escapeHtml(d.stateAt ?? '')}</div></td>
<td>${states}</td>
<td>${requirement}</td>
<td>${payment}</td>
<td>${cell(d.registryError)}</td>
<td>${cell(d.resultFiles)}</td>
</tr>`;
}

function docflowsSection(history: DealHistory): string {
  if (history.docflows.length === 0) return '<p class="muted">The news feed has shown no docflow of this deal.</p>';
  const cut = history.cut.history ? '<p class="attention">Only the first states seen are listed.</p>' : '';
  return `${cut}<table>
<thead><tr><th>docflow</th><th>try</th><th>last state</th><th>states seen</th><th>requirement</th><th>payment</th><th>registry error</th><th>result files</th></tr></thead>
<tbody>
${history.docflows.map(docflowRow).join('\n')}
</tbody>
</table>`;
}

/** Operator actions as a table (the deal's page and `/audit`); a dealId links to its search. */
export function actionsTable(actions: readonly RecordedAction[]): string {
  const rows = actions.map(
    (a) => `<tr>
<td class="muted">${escapeHtml(a.id)}</td>
<td>${escapeHtml(a.at)}</td>
<td>${escapeHtml(a.who)}</td>
<td><code>${escapeHtml(a.action)}</code></td>
<td>${code(a.batch)}</td>
<td>${a.dealId ? `<a href="${escapeHtml(`${DEALS_PATH}?q=${encodeURIComponent(a.dealId)}`)}"><code>${escapeHtml(a.dealId)}</code></a>` : cell(null)}</td>
<td>${cell(a.detail)}</td>
</tr>`,
  );
  return `<table>
<thead><tr><th>#</th><th>when</th><th>who</th><th>action</th><th>batch</th><th>deal</th><th>detail</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>`;
}

export function renderDealPage(history: DealHistory, nav: NavPaths): string {
  const actions = history.actions.length
    ? `${history.cut.actions ? `<p class="attention">Only the latest ${history.actions.length} actions are listed; <a href="${escapeHtml(auditOf(history.dealId))}">every action</a>.</p>` : ''}${actionsTable(history.actions)}`
    : '<p class="muted">No operator action names this dealId.</p>';
  const body = `<p><code>${escapeHtml(history.dealId)}</code> <span class="muted">bank ${escapeHtml(history.bank)}, ${escapeHtml(history.type)}</span></p>
<h2>Claim and tries (the ledger)</h2>
${ledgerSection(history.ledger)}
<h2>Docflows and the states the news feed showed</h2>
${docflowsSection(history)}
<h2>Operator actions</h2>
${actions}`;
  return pageHtml('a deal', body, nav);
}

export interface DealsRoutesOptions extends NavPaths {
  db: Database;
  logger?: Logger;
}

type SearchQuery = { Querystring: { q?: unknown; format?: unknown } };
type DealParams = { Params: { bank: string; type: string; '*': string } };

export function dealsRoutes(options: DealsRoutesOptions) {
  const { db, logger } = options;
  const nav: NavPaths = { boardPath: options.boardPath, batchesPath: options.batchesPath };
  // eslint-disable-next-line @typescript-eslint/require-await -- fastify waits for a plugin that is an async function
  return async (app: FastifyInstance): Promise<void> => {
    app.setErrorHandler(pageErrorHandler(logger));

    app.get<SearchQuery>(DEALS_PATH, async (request, reply) => {
      const json = wantsJson(request);
      const { q = '' } = request.query;
      if (typeof q !== 'string' || q.length > MAX_QUERY_LENGTH) throw new PageError(400, BAD_QUERY);
      const search = await searchDeals(db, q);
      return sendPage(reply, json, search, () => renderSearchPage(search, nav));
    });

    // The dealId is the rest of the path: a bank's dealId may hold a `/` (sent as %2F), and may be longer than a parameter.
    app.get<DealParams>(`${DEALS_PATH}/:bank/:type/*`, async (request, reply) => {
      const json = wantsJson(request);
      const { bank, type, '*': dealId } = request.params;
      if (!bank || !type || !dealId) throw new PageError(404, NO_SUCH_DEAL);
      const history = await dealHistory(db, bank, type, dealId);
      if (!history) throw new PageError(404, NO_SUCH_DEAL);
      return sendPage(reply, json, history, () => renderDealPage(history, nav));
    });
  };
}

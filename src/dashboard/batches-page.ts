/**
 * The batches page: server-rendered HTML, no script, no asset from elsewhere.
 * Every value passes through `escapeHtml`.
 */
import { DEFAULT_KIND, KINDS } from '../docflows/registry.js';
import { OUTCOMES, SUBMITTED_OUTCOMES, type Outcome } from '../domain/outcome.js';
import type { BatchStatus } from '../batch/batch-status.js';
import { describeRegistered, describeStates } from '../outcomes/state-tally.js';
import { describeStatesAge, type StatesAge } from '../feed/states-age.js';

/** A value as page text: nothing for null or undefined, JSON for an object. */
export function textOf(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      return value === null ? '' : (JSON.stringify(value) ?? '');
    default:
      return '';
  }
}

export function escapeHtml(value: unknown): string {
  return textOf(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface BatchesPageOptions {
  /** Where Bull Board is mounted. */
  boardPath: string;
  queueName: string;
  /** The most batches the page lists. */
  limit: number;
  /** Batches that could not be read (their ids), shown apart. */
  unreadable?: string[];
  generatedAt?: Date;
  /** How old the docflows' states are and whether a follower keeps them fresh (src/feed/states-age.ts). */
  statesAge?: StatesAge;
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1c2128;background:#f6f8fa}
h1{font-size:1.3rem;margin:0 0 .5rem}
nav a{margin-right:1rem}
table{border-collapse:collapse;background:#fff;margin-top:1rem;width:100%}
th,td{border:1px solid #d0d7de;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#eaeef2}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.attention{color:#9a3412;font-weight:600}
.done{color:#116329}
.muted{color:#57606a;font-size:.9em}
code{font-size:.95em}
`;

/** Outcomes that need a person, shown in their own colour. */
const NEEDS_PERSON: ReadonlySet<Outcome> = new Set(['invalid', 'not_found', 'ambiguous', 'rejected', 'forbidden', 'unavailable', 'failed']);

function counts(status: BatchStatus): string {
  const parts = OUTCOMES.filter((o) => (status.outcomes[o] ?? 0) > 0).map((o) => {
    const text = `${escapeHtml(o)}&nbsp;${escapeHtml(status.outcomes[o])}`;
    return NEEDS_PERSON.has(o) ? `<span class="attention">${text}</span>` : text;
  });
  const duplicates = status.duplicates?.length ?? 0;
  if (duplicates > 0)
    parts.push(`<span class="attention">two docflows at the gateway (DUPLICATE_DOCFLOW)&nbsp;${escapeHtml(duplicates)}</span>`);
  return parts.join(', ') || '<span class="muted">no rows</span>';
}

function queueStates(status: BatchStatus): string {
  const parts = Object.entries(status.queue).map(([state, n]) => `${escapeHtml(state)}&nbsp;${escapeHtml(n)}`);
  return parts.join(', ');
}

function loadState(status: BatchStatus): string {
  const state =
    escapeHtml(status.state) + (status.loaderDied ? ' <span class="attention">(its loader died: load the same input again)</span>' : '');
  if (status.registered) {
    // Green only when every row reached the registry and was registered: rows never filed are not a registration.
    const filed = OUTCOMES.filter((o) => SUBMITTED_OUTCOMES.has(o)).reduce((sum, o) => sum + (status.outcomes[o] ?? 0), 0);
    const registered = describeRegistered({ total: status.total, filed, states: status.states });
    return `${state}, <span class="${registered.whole ? 'done' : 'attention'}">${escapeHtml(registered.text)}</span>`;
  }
  return status.done ? `${state}, <span class="done">done</span>` : state;
}

/** Where the batch's docflows stand at the registry (docs/operations.md, "The life of a deal"); refusals and requirements stand out. */
function registry(status: BatchStatus): string {
  const text = describeStates(status);
  if (!text) return '<span class="muted">—</span>';
  const needsBank = (status.states.error ?? 0) > 0 || Object.keys(status.waitingFor).length > 0;
  return needsBank ? `<span class="attention">${escapeHtml(text)}</span>` : escapeHtml(text);
}

function downloads(status: BatchStatus): string {
  if (status.state !== 'loaded') return '<span class="muted">when loaded</span>';
  const base = `/batches/${encodeURIComponent(status.batch)}`;
  return [
    `<a href="${escapeHtml(`${base}/results.csv`)}">results.csv</a>`,
    `<a href="${escapeHtml(`${base}/results.csv?excel=1`)}">for Excel</a>`,
    `<a href="${escapeHtml(`${base}/results.csv?format=jsonl`)}">jsonl</a>`,
    `<a href="${escapeHtml(`${base}/attention.csv`)}">attention file</a>`,
  ].join(' · ');
}

/** The rows, and while a loaded batch runs, how far it got: a bar and `N finished (P %)`. */
function progress(status: BatchStatus): string {
  const total = escapeHtml(status.total);
  if (status.done || status.state !== 'loaded' || status.total === 0) return total;
  const finished = status.total - (status.outcomes.pending ?? 0);
  const percent = Math.floor((finished / status.total) * 100);
  return `${total}<div class="muted"><progress max="${status.total}" value="${finished}"></progress> ${finished} finished (${percent}&nbsp;%)</div>`;
}

/** A batch of another type than registrations says which (its rows are lifts, extracts ...). */
function typeNote(status: BatchStatus): string {
  if (status.type === DEFAULT_KIND.type) return '';
  const kind = KINDS.find((k) => k.type === status.type);
  return ` <span class="muted">${escapeHtml(kind?.title ?? status.type)}</span>`;
}

function row(status: BatchStatus): string {
  const times = [
    `started ${status.startedAt}`,
    status.finishedAt ? `finished ${status.finishedAt}` : '',
    status.rowsPerSecond ? `${status.rowsPerSecond} rows/s` : '',
  ]
    .filter(Boolean)
    .map(escapeHtml)
    .join('<br>');
  return `<tr>
<td><code>${escapeHtml(status.batch)}</code>${typeNote(status)}<div class="muted">${escapeHtml(status.file)}</div></td>
<td>${loadState(status)}</td>
<td class="n">${progress(status)}</td>
<td>${counts(status)}</td>
<td>${queueStates(status)}</td>
<td>${registry(status)}</td>
<td class="muted">${times}</td>
<td>${downloads(status)}</td>
</tr>`;
}

/**
 * How old the "at the registry" column is: the news feed's last complete read, and, when no
 * follower reads it (a night run from cron that exited), that signatures, payments and
 * registrations since are not shown, standing out.
 */
function statesLine(age: StatesAge | undefined): string {
  if (!age) return '';
  return `<p class="${age.stale ? 'attention' : 'muted'}" id="states-age">${escapeHtml(describeStatesAge(age))}</p>`;
}

export function renderBatchesPage(statuses: readonly BatchStatus[], options: BatchesPageOptions): string {
  const board = `${options.boardPath}/queue/${encodeURIComponent(options.queueName)}`;
  const unreadable = options.unreadable?.length
    ? `<p class="attention">Could not read: ${options.unreadable.map((id) => `<code>${escapeHtml(id)}</code>`).join(', ')}</p>`
    : '';
  const body = statuses.length
    ? `<table>
<thead><tr><th>batch</th><th>load</th><th>rows</th><th>outcomes</th><th>unfinished rows in the queue</th><th>at the registry</th><th>times</th><th>files</th></tr></thead>
<tbody>
${statuses.map(row).join('\n')}
</tbody>
</table>`
    : '<p>No batches in Redis yet.</p>';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>realty-batch: batches</title>
<style>${STYLE}</style>
</head>
<body>
<h1>realty-batch: batches</h1>
<nav><a href="${escapeHtml(options.boardPath)}">Queue (Bull Board)</a><a href="${escapeHtml(`${board}?status=failed`)}">Failed jobs</a><a href="/deals">Find a deal</a><a href="/audit">Operator actions</a><a href="/metrics">Metrics</a></nav>
<p class="muted">Batches in Redis, newest first (at most ${escapeHtml(options.limit)})${options.generatedAt ? `, as of ${escapeHtml(options.generatedAt.toISOString())}` : ''}.
A row's outcome is the record; to send rows that ended <code>unavailable</code> or <code>failed</code> again, run <code>realty-batch retry &lt;batch&gt;</code>
(a finished job holds no deal any more, so retrying it on the queue page cannot send it).</p>
${statesLine(options.statesAge)}
${unreadable}
${body}
</body>
</html>
`;
}

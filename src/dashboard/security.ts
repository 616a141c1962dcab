/**
 * What every answer of the operations page carries, under which names it answers, and
 * which pages may ask it to change something: security headers on every route, a foreign
 * `Host` refused (DNS rebinding), and mutations refused unless they come from the page's
 * own origin.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UsageError } from '../errors.js';

/**
 * One policy for every answer, written for Bull Board 9.10's UI (its
 * `dist/index.ejs` and bundle) and the batches page:
 * - scripts: only its own files (`static/js/...`, loaded with `<script src>` and
 *   its chunk loader), no inline script and no eval; the `__UI_CONFIG__` block is
 *   `type="application/json"`, data the policy does not govern;
 * - its highlighter runs in a Web Worker from its own `static/js/async/`;
 * - styles: its own stylesheets, plus inline ones: the loading screen's `style`
 *   attributes and `<style>`, and CodeMirror's `<style>` element (Bull Board gives
 *   it no nonce), and the batches page's `<style>`. Inline style cannot run script;
 * - images: its favicon and logo, and CodeMirror's `data:` SVG icons;
 * - fonts: nothing from elsewhere. Its page links Google Fonts, which the board
 *   plugin strips (see board.ts); without that the browser would refuse it here and
 *   fall back to the system's fonts;
 * - connect: its API under the same origin.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // Another site may neither embed these answers (a results file through <script> or <img>) nor keep a handle on this window.
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
});

/**
 * An `onRequest` hook, added before any other: headers set here stay on the
 * reply whatever answers it (a route, a refusal, a 404, an error handler).
 */
export function securityHeaders(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.headers(SECURITY_HEADERS);
  return Promise.resolve();
}

/** Methods that change nothing; every other one is a mutation. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

export const FOREIGN_ORIGIN =
  'This page changes nothing for another site: open the dashboard at its own address (or give it --public-url when a proxy serves it).';

/**
 * The origin of `--public-url`; only an origin (scheme, host, optional port),
 * since the page's links start at `/`.
 */
export function parsePublicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--public-url must be a URL such as https://ops.example.com, not ${JSON.stringify(value)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--public-url must start with http:// or https://.');
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw new UsageError(
      `--public-url names where the page is served from, its scheme, host and port only (such as ${url.origin}): the dashboard cannot live under a path.`,
    );
  }
  return url.origin;
}

/** `value`'s origin, or undefined when it has none (`null`, not a URL). */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

export interface OriginCheckOptions {
  /** The origin the page is served from (behind a proxy); without it, the request's own scheme and Host. */
  publicOrigin?: string | undefined;
}

/**
 * An `onRequest` hook answering 403 to a mutation whose `Origin` (or, without
 * one, `Referer`) is not the page's own. Browsers send `Origin` with every
 * cross-site POST, PUT, PATCH and DELETE (`null` when a page hides it, which is
 * refused too), so a request with neither header is not a browser's and is let
 * through to the credentials alone: `curl -u` and scripts keep working.
 */
export function refuseForeignOrigin(options: OriginCheckOptions = {}) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (SAFE_METHODS.has(request.method)) return undefined;
    const { origin, referer } = request.headers;
    if (origin === undefined && referer === undefined) return undefined;
    const claimed = origin !== undefined ? originOf(origin) : originOf(referer!);
    // Without --public-url the page is where the request says it went: its scheme and Host.
    const own = options.publicOrigin ?? originOf(`${request.protocol}://${request.host}`);
    if (claimed !== undefined && claimed === own) return undefined;
    return reply.code(403).type('text/plain; charset=utf-8').send(`${FOREIGN_ORIGIN}\n`);
  };
}

/** The names a page on this machine is reached by: a rebinding page's `Host` is always its own name, never one of these. */
const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

export const LOOPBACK_ONLY =
  'Without credentials the dashboard answers only at localhost, 127.0.0.1 or [::1]: open it at one of those addresses (a page reached under another name may be another site that rebound its name to this machine).';

/** The sentence a request under another name than `--public-url`'s gets. */
export function notPublicHost(publicHost: string): string {
  return `The dashboard answers only at ${publicHost} (its --public-url) and on this machine: open it there, and have the proxy pass that Host header on.`;
}

/** The host name of a `Host` header, lower case, without its port (`[::1]` keeps its brackets); undefined when it is none. */
export function hostNameOf(host: string | undefined): string | undefined {
  if (host === undefined || host === '' || /[\s/?#@\\]/.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).hostname || undefined;
  } catch {
    return undefined;
  }
}

export interface HostCheckOptions {
  /** No credentials (`--no-auth`): only the loopback names. */
  loopbackOnly: boolean;
  /** `--public-url`'s origin: its host name (any port), and the loopback names, with or without credentials. */
  publicOrigin?: string | undefined;
}

/**
 * An `onRequest` hook against DNS rebinding: another site that points its own name at this
 * machine gets its page's requests sent here with the browser's `Host: its.name`, and, without
 * credentials to ask for, would read the attention file and pause the queue. So without
 * credentials the page answers only under a loopback name, and with `--public-url` only under
 * that URL's host name (or a loopback name: a health check on this machine, a proxy that passes
 * its upstream's address); any other `Host` gets 421 and one sentence. With credentials and no
 * public URL every name is answered: a rebinding page has not the credentials of this one's.
 */
export function refuseForeignHost(options: HostCheckOptions) {
  const publicHost = options.publicOrigin !== undefined ? new URL(options.publicOrigin).hostname : undefined;
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (!options.loopbackOnly && publicHost === undefined) return undefined;
    const name = hostNameOf(request.headers.host);
    if (name !== undefined && (LOOPBACK_HOSTS.has(name) || name === publicHost)) return undefined;
    const sentence = publicHost !== undefined ? notPublicHost(publicHost) : LOOPBACK_ONLY;
    return reply.code(421).type('text/plain; charset=utf-8').send(`${sentence}\n`);
  };
}

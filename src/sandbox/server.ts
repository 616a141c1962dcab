/**
 * The gateway sandbox on node:http: routing, runtime settings and the life cycle.
 * No framework: it must start in well under a second and serve thousands of calls a second.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { API_PREFIX, CONTENTS_PATH, NEWS_PATH, SUGGEST_PATH } from '../domain/gateway.js';
import { createLogins, handleAuth, parseUser, type Logins } from './auth.js';
import { createRandom } from './faults.js';
import { handleCreateDocflow } from './creation.js';
import { settleDocflow } from './docflow-types.js';
import { RegistryBook } from './encumbrances.js';
import { handleNews, handleSuggest, type Runtime, type RuntimeConfig } from './handlers.js';
import { readJsonBody, sendError, sendJson } from './http.js';
import { NewsFeed } from './news.js';
import { normaliseName } from './register-compare.js';
import { handleDownloadFile, handleGetDocflow, handlePayment, handleSendDocflow, handleSignFile } from './operations.js';
import {
  checkConfigPatch,
  DEFAULT_LIFECYCLE_MS,
  type RunningSandbox,
  type SandboxConfigPatch,
  type SandboxOptions,
  type SandboxStats,
} from './options.js';
import { contentStats } from './content-registry.js';
import { handleUploadContent } from './contents.js';
import { defaultRegistryPath, loadRegistry, validateRegistry, type RegistryObject } from './registry.js';
import { viewOf } from './docflow-record.js';
import { SandboxState } from './state.js';
import { indexRegistry } from './suggest.js';

/** A sample request of the public documentation writes the path without `location`. */
const ALTERNATE_SUGGEST_PATH = `${API_PREFIX}/cadastre/suggest`;
const AUTH_PATH = `${API_PREFIX}/auth`;
const DOCFLOWS_PREFIX = `${API_PREFIX}/docflows/`;
const PAYMENTS_PREFIX = '/__sandbox/payments/';
/** A docflow id: the docflow types are words, never UUIDs. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Separate streams from one seed: the faults of creation, of the later operations, and the lives. */
const OPERATIONS_STREAM = 0x9e3779b9;
const LIFE_STREAM = 0x85ebca6b;

function applyPatch(config: RuntimeConfig, logins: Logins, patch: SandboxConfigPatch): void {
  if (patch.sessions !== undefined) config.sessions = new Set(patch.sessions);
  if (patch.users !== undefined) logins.users = patch.users.map(parseUser);
  if (patch.sessionTtlMs !== undefined) logins.sessionTtlMs = patch.sessionTtlMs;
  if (patch.restrictedSessions !== undefined) config.restrictedSessions = new Set(patch.restrictedSessions);
  if (patch.egronRegions !== undefined) {
    config.egronRegions = new Set(patch.egronRegions.map(normaliseName).filter((r) => r !== ''));
  }
  if (patch.fault501 !== undefined) config.rates.fault501 = patch.fault501;
  if (patch.fault5xx !== undefined) config.rates.fault5xx = patch.fault5xx;
  if (patch.faultReset !== undefined) config.rates.faultReset = patch.faultReset;
  if (patch.faultLost !== undefined) config.rates.faultLost = patch.faultLost;
  if (patch.latencyMs !== undefined) config.latencyMs = patch.latencyMs;
  if (patch.requestIds !== undefined) config.requestIds = patch.requestIds;
  // Applies to docflows created from now on; those already waiting keep their time.
  if (patch.newsLagMs !== undefined) config.newsLagMs = patch.newsLagMs;
  if (patch.newsOutage !== undefined) config.newsOutage = patch.newsOutage;
  // Each applies to docflows created from now on: a life is decided at its creation.
  if (patch.lifecycleMs !== undefined) config.life.lifecycleMs = patch.lifecycleMs;
  if (patch.holdSent !== undefined) config.life.holdSent = patch.holdSent;
  if (patch.faultRegistry !== undefined) config.life.faultRegistry = patch.faultRegistry;
  if (patch.payment !== undefined) config.life.payment = patch.payment;
  if (patch.strictContents !== undefined) config.strictContents = patch.strictContents;
}

function statsOf(rt: Runtime): SandboxStats {
  return { ...rt.state.stats(), logins: rt.logins.logins, loginsRefused: rt.logins.loginsRefused, contents: contentStats(rt) };
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  sendError(res, 405, { code: 'methodNotAllowed', message: `Use ${allow} on this path` }, { allow });
}

function notFound(res: ServerResponse): void {
  sendError(res, 404, { code: 'notFound', message: 'There is no such endpoint', target: 'path' });
}

async function handleConfig(rt: Runtime, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonBody(req);
  if (!body.ok) return sendError(res, 400, body.error);
  try {
    applyPatch(rt.config, rt.logins, checkConfigPatch(body.value));
  } catch (err) {
    return sendError(res, 400, { code: 'validation', message: (err as Error).message, target: 'body' });
  }
  res.writeHead(204).end();
}

/** The sandbox's own endpoints (tests and the demo read and steer it through them). */
const SANDBOX_ROUTES: Record<
  string,
  { method: string; handle(rt: Runtime, req: IncomingMessage, res: ServerResponse): void | Promise<void> }
> = {
  '/__sandbox/stats': { method: 'GET', handle: (rt, _req, res) => sendJson(res, 200, statsOf(rt)) },
  '/__sandbox/docflows': { method: 'GET', handle: (rt, _req, res) => sendJson(res, 200, rt.state.docflows()) },
  '/__sandbox/registry': {
    method: 'GET',
    handle: (rt, _req, res) => {
      // The records change as docflows complete, and lives step only when the sandbox is read.
      rt.state.advance();
      sendJson(res, 200, rt.registry.view());
    },
  },
  '/__sandbox/config': { method: 'POST', handle: handleConfig },
};

async function route(rt: Runtime, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const method = req.method ?? 'GET';

  if (path === SUGGEST_PATH || path === ALTERNATE_SUGGEST_PATH) {
    return method === 'POST' ? handleSuggest(rt, req, res) : methodNotAllowed(res, 'POST');
  }
  if (path === AUTH_PATH) return method === 'POST' ? handleAuth(rt.logins, rt.userIds, req, res) : methodNotAllowed(res, 'POST');
  if (path === NEWS_PATH) {
    return method === 'GET' ? handleNews(rt, req, res, queryAt === -1 ? '' : url.slice(queryAt + 1)) : methodNotAllowed(res, 'GET');
  }
  if (path === CONTENTS_PATH) return method === 'POST' ? handleUploadContent(rt, req, res) : methodNotAllowed(res, 'POST');
  if (path.startsWith(DOCFLOWS_PREFIX)) return routeDocflow(rt, req, res, path, method);
  if (path.startsWith(PAYMENTS_PREFIX)) return routePayment(rt, res, path, method);
  const own = SANDBOX_ROUTES[path];
  if (own) return method === own.method ? own.handle(rt, req, res) : methodNotAllowed(res, own.method);
  notFound(res);
}

/**
 * Under `/docflows/`: `<type>` POST creates a docflow; `<id>` GET reads it and POST sends
 * it; `<id>/files/<fileId>` GET downloads a file; `<id>/files/<fileId>/signatures` POST signs it.
 */
async function routeDocflow(rt: Runtime, req: IncomingMessage, res: ServerResponse, path: string, method: string): Promise<void> {
  let segments: string[];
  try {
    segments = path.slice(DOCFLOWS_PREFIX.length).split('/').map(decodeURIComponent);
  } catch {
    return notFound(res);
  }
  if (segments.some((s) => s === '')) return notFound(res);
  const [first = '', files, fileId, signatures] = segments;
  if (segments.length === 1) {
    if (method === 'GET') return handleGetDocflow(rt, req, res, first);
    if (method !== 'POST') return methodNotAllowed(res, 'GET, POST');
    return UUID.test(first) || rt.state.get(first) !== undefined
      ? handleSendDocflow(rt, req, res, first)
      : handleCreateDocflow(rt, req, res, first);
  }
  if (files !== 'files' || fileId === undefined) return notFound(res);
  if (segments.length === 3) return method === 'GET' ? handleDownloadFile(rt, req, res, first, fileId) : methodNotAllowed(res, 'GET');
  if (segments.length === 4 && signatures === 'signatures') {
    return method === 'POST' ? handleSignFile(rt, req, res, first, fileId) : methodNotAllowed(res, 'POST');
  }
  notFound(res);
}

function routePayment(rt: Runtime, res: ServerResponse, path: string, method: string): void {
  if (method !== 'POST') return methodNotAllowed(res, 'POST');
  let uin: string;
  try {
    uin = decodeURIComponent(path.slice(PAYMENTS_PREFIX.length));
  } catch {
    return notFound(res);
  }
  handlePayment(rt, res, uin);
}

async function resolveRegistry(registry: SandboxOptions['registry']): Promise<RegistryObject[]> {
  if (Array.isArray(registry)) return validateRegistry(registry, 'option');
  return loadRegistry(registry ?? defaultRegistryPath());
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      const reason = err.code === 'EADDRINUSE' ? 'is already in use' : `cannot be used (${err.code ?? err.message})`;
      reject(new Error(`The sandbox cannot listen: ${host}:${port} ${reason}.`, { cause: err }));
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const port = options.port ?? 0;
  const host = options.host ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`The sandbox port must be an integer from 0 to 65535, not ${String(port)}.`);
  }
  if (options.seed !== undefined && !Number.isFinite(options.seed)) {
    throw new Error(`The sandbox seed must be a number, not ${String(options.seed)}.`);
  }
  const patch = checkConfigPatch(
    Object.fromEntries(
      Object.entries({
        sessions: options.sessions,
        users: options.users,
        sessionTtlMs: options.sessionTtlMs,
        restrictedSessions: options.restrictedSessions,
        egronRegions: options.egronRegions,
        fault501: options.fault501,
        fault5xx: options.fault5xx,
        faultReset: options.faultReset,
        faultLost: options.faultLost,
        latencyMs: options.latencyMs,
        requestIds: options.requestIds,
        newsLagMs: options.newsLagMs,
        newsOutage: options.newsOutage,
        lifecycleMs: options.lifecycleMs,
        holdSent: options.holdSent,
        faultRegistry: options.faultRegistry,
        payment: options.payment,
        strictContents: options.strictContents,
      }).filter(([, value]) => value !== undefined),
    ),
  );
  const registry = await resolveRegistry(options.registry);

  const config: RuntimeConfig = {
    sessions: new Set(['demo-session']),
    restrictedSessions: new Set(),
    egronRegions: new Set(),
    rates: { fault501: 0, fault5xx: 0, faultReset: 0, faultLost: 0 },
    latencyMs: 0,
    // The contract does not promise that a repeated requestId is refused: assume the worst.
    requestIds: 'ignore',
    newsLagMs: 0,
    newsOutage: false,
    life: { lifecycleMs: DEFAULT_LIFECYCLE_MS, faultRegistry: 0, payment: 0 },
    strictContents: false,
  };
  const logins = createLogins();
  applyPatch(config, logins, patch);
  const news = new NewsFeed();
  const registryBook = new RegistryBook(registry);
  const seed = options.seed;
  const rt: Runtime = {
    config,
    random: createRandom(seed),
    operationsRandom: createRandom(seed === undefined ? undefined : (seed ^ OPERATIONS_STREAM) >>> 0),
    lifeRandom: createRandom(seed === undefined ? undefined : (seed ^ LIFE_STREAM) >>> 0),
    userIds: new Map(),
    // Every change of a docflow is an item of the feed, `newsLagMs` (as at its creation) after it.
    state: new SandboxState(
      (docflow, at) => news.record(viewOf(docflow), docflow.newsLagMs, at),
      (docflow, at) => settleDocflow(registryBook, docflow, at),
    ),
    news,
    index: indexRegistry(registry),
    registry: registryBook,
    logins,
    onCall: options.onCall,
  };

  const server = createServer((req, res) => {
    route(rt, req, res).catch(() => {
      // Nothing is logged: a sandbox bug shows up as a 500 the test sees.
      if (!res.headersSent) sendError(res, 500, { code: 'internalError', message: 'The sandbox failed on this request' });
      else res.destroy();
    });
  });
  const boundPort = await listen(server, port, host);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  rt.state.baseUrl = `http://${urlHost}:${boundPort}`;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${boundPort}`,
    port: boundPort,
    stats: () => statsOf(rt),
    docflows: () => rt.state.docflows(),
    configure: (changes) => applyPatch(config, logins, checkConfigPatch(changes)),
    pay: (uin) => rt.state.pay(uin).kind === 'paid',
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Keep-alive sockets would hold close() open until their idle time-out.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

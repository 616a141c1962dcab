/**
 * The gateway endpoints' shared parts (the runtime, auth, latency, faults), suggest and the
 * news feed; docflow creation is in creation.ts. Each follows the gateway's order: auth,
 * latency, faults, body, contract, account, register, then the work itself.
 * With a latency, the answer (or the dropped connection) leaves `latencyMs` after the
 * request arrived and the sandbox's own work is done within that time, as a gateway's is
 * within its response time: a burst of requests is answered on time rather than queueing
 * behind one another's work after the delay (which added several milliseconds a call at
 * 1,000 requests a second).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorBody } from '../domain/gateway.js';
import { loginSessionValid, type Logins } from './auth.js';
import type { RegistryBook } from './encumbrances.js';
import type { LifeRates } from './lifecycle.js';
import { pickFault, type FaultRates, type InjectedFault, type RandomSource } from './faults.js';
import { readJsonBody, sendError, sendJson, sendJsonText } from './http.js';
import type { NewsFeed } from './news.js';
import type { RequestIdsMode } from './options.js';
import type { SandboxState } from './state.js';
import { parseSuggestQuery, suggest, type indexRegistry } from './suggest.js';

export interface RuntimeConfig {
  sessions: Set<string>;
  restrictedSessions: Set<string>;
  /** Normalised region names. */
  egronRegions: Set<string>;
  rates: FaultRates;
  latencyMs: number;
  requestIds: RequestIdsMode;
  /** Milliseconds between a docflow's creation and its item in the news feed. */
  newsLagMs: number;
  newsOutage: boolean;
  /** The docflows' lives, as set for docflows created from now on. */
  life: LifeRates;
  /** Refuse a docflow naming a content id the sandbox never received (contents.ts). */
  strictContents: boolean;
}

export interface Runtime {
  config: RuntimeConfig;
  /** The creation and suggest faults' rolls. */
  random: RandomSource;
  /** The later operations' fault rolls: a follower's reads never shift the creation faults. */
  operationsRandom: RandomSource;
  /** One draw per docflow created, the seed of its life. */
  lifeRandom: RandomSource;
  /** Each session's user id, made once (a hash) and shared by its docflows. */
  userIds: Map<string, string>;
  state: SandboxState;
  news: NewsFeed;
  index: ReturnType<typeof indexRegistry>;
  /** The mortgage records the registry holds now. */
  registry: RegistryBook;
  /** `--users`, `--session-ttl-ms` and the sessions `/auth` handed out. */
  logins: Logins;
  /** Each rate-limited call's arrival time (SandboxOptions.onCall). */
  onCall?: ((at: number) => void) | undefined;
}

export const UNAUTHORIZED: ApiErrorBody = {
  code: 'unauthorized',
  message: 'The Authorization header is absent or its value is incorrect',
};
export const FORBIDDEN: ApiErrorBody = { code: 'forbidden', message: 'Access is restricted for this account' };
export const EGRON_UNAVAILABLE: ApiErrorBody = {
  code: 'egronUnavailable',
  message: 'The request goes to the state real-estate register system, which is temporarily unsupported',
};
export const FAULT_BODIES: Record<number, ApiErrorBody> = {
  501: EGRON_UNAVAILABLE,
  500: { code: 'internalError', message: 'Internal server error' },
  502: { code: 'badGateway', message: 'Bad gateway' },
  503: { code: 'serviceUnavailable', message: 'The service is temporarily unavailable' },
};
const NEWS_UNAVAILABLE: ApiErrorBody = { code: 'serviceUnavailable', message: 'The news feed is temporarily unavailable' };

const AUTH_HEADER = /^auth\.sid\s+(\S+)\s*$/i;

/** The accepted session of the request, or undefined. The id itself is never echoed. */
export function authenticate(rt: Runtime, req: IncomingMessage): string | undefined {
  const match = AUTH_HEADER.exec(req.headers.authorization ?? '');
  const session = match?.[1];
  if (session === undefined) return undefined;
  return rt.config.sessions.has(session) || loginSessionValid(rt.logins, session) ? session : undefined;
}

export function sendUnauthorized(res: ServerResponse): void {
  sendError(res, 401, UNAUTHORIZED);
}

/** When each request's answer may leave (performance.now() ms). */
const dueTimes = new WeakMap<IncomingMessage, number>();

/** Runs `fn` once the request's latency has passed. */
function whenDue(req: IncomingMessage, fn: () => void): void {
  const wait = (dueTimes.get(req) ?? 0) - performance.now();
  if (wait > 0) setTimeout(fn, wait);
  else fn();
}

/** From here on, the answer to `req` waits until `latencyMs` after now. */
export function addLatency(rt: Runtime, req: IncomingMessage, res: ServerResponse): void {
  if (rt.config.latencyMs <= 0) return;
  dueTimes.set(req, performance.now() + rt.config.latencyMs);
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    whenDue(req, () => end(...args));
    return res;
  }) as ServerResponse['end'];
}

/** Drops the connection without an answer, once the latency has passed. */
export function drop(req: IncomingMessage): void {
  whenDue(req, () => req.socket.destroy());
}

/** Rolls the faults; a reset drops the socket without an answer. Returns the fault, if any. */
export function injectFault(rt: Runtime, req: IncomingMessage, random: RandomSource = rt.random): InjectedFault | undefined {
  const fault = pickFault(rt.config.rates, random);
  if (fault === undefined) return undefined;
  rt.state.countFault(fault);
  if (fault === 'reset') drop(req);
  return fault;
}

export async function handleSuggest(rt: Runtime, req: IncomingMessage, res: ServerResponse): Promise<void> {
  rt.onCall?.(Date.now());
  rt.state.countSuggestCall();
  if (authenticate(rt, req) === undefined) return sendUnauthorized(res);
  addLatency(rt, req, res);
  const fault = injectFault(rt, req);
  if (fault === 'reset') return;
  if (fault !== undefined) return sendError(res, fault, FAULT_BODIES[fault] ?? {});
  const body = await readJsonBody(req);
  if (!body.ok) return sendError(res, 400, body.error, body.close ? { connection: 'close' } : undefined);
  const parsed = parseSuggestQuery(body.value);
  if ('error' in parsed) return sendError(res, 400, parsed.error);
  sendJsonText(res, 200, suggest(rt.index, parsed.query));
}

/**
 * `GET /news`. No injected faults: the rolls share one seeded random source and the feed is
 * polled at time-dependent rates, so drawing here would make seeded creation faults
 * unrepeatable. `newsOutage` is the deterministic way to make it fail.
 */
export function handleNews(rt: Runtime, req: IncomingMessage, res: ServerResponse, query: string): void {
  if (authenticate(rt, req) === undefined) return sendUnauthorized(res);
  addLatency(rt, req, res);
  if (rt.config.newsOutage) return sendError(res, 503, NEWS_UNAVAILABLE);
  const now = performance.now();
  rt.state.advance(now);
  const answer = rt.news.page(new URLSearchParams(query), now);
  if (!answer.ok) return sendError(res, 400, answer.error);
  sendJson(res, 200, answer.page);
}

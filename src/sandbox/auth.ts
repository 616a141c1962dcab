/**
 * `POST /realty/v1/auth` and the sessions it hands out: `--users login:password:accountId`
 * may log in; each login makes a fresh random session id that lives `--session-ttl-ms`
 * (for ever without it), then answers 401 like an unknown one. Ids and passwords are
 * never echoed.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorBody } from '../domain/gateway.js';
import { readJsonBody, sendError, sendJson } from './http.js';
import { userIdOf } from './news.js';

export interface SandboxUser {
  login: string;
  password: string;
  accountId: string;
}

export interface Logins {
  users: SandboxUser[];
  /** 0: sessions from /auth never expire. Applies to logins from now on. */
  sessionTtlMs: number;
  /** Session id → when it expires (performance.now() ms; Infinity for never). */
  readonly sessions: Map<string, number>;
  /** Logins answered 200 and 400. */
  logins: number;
  loginsRefused: number;
}

export function createLogins(): Logins {
  return { users: [], sessionTtlMs: 0, sessions: new Map(), logins: 0, loginsRefused: 0 };
}

/** `login:password:accountId`; the password may hold colons, the login and account id may not. */
export function parseUser(text: string): SandboxUser {
  const first = text.indexOf(':');
  const last = text.lastIndexOf(':');
  if (first <= 0 || last === first || last === text.length - 1 || last - first <= 1) {
    throw new Error('A sandbox user is login:password:accountId, each part not empty.');
  }
  return { login: text.slice(0, first), password: text.slice(first + 1, last), accountId: text.slice(last + 1) };
}

const BAD_CREDENTIALS: ApiErrorBody = { code: 'invalidCredentials', message: 'The login, password or account id is incorrect' };

/** Whether a session id from /auth is accepted now; an expired one is forgotten. */
export function loginSessionValid(logins: Logins, session: string, now = performance.now()): boolean {
  const expiresAt = logins.sessions.get(session);
  if (expiresAt === undefined) return false;
  if (now < expiresAt) return true;
  logins.sessions.delete(session);
  return false;
}

/** Logs a user in: 200 `{userId, sessionId}`, 400 on bad credentials. `userIds` learns the session's user id (one per user). */
export async function handleAuth(logins: Logins, userIds: Map<string, string>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonBody(req);
  if (!body.ok) return sendError(res, 400, body.error, body.close ? { connection: 'close' } : undefined);
  const { login, password, accountId } = (body.value ?? {}) as Record<string, unknown>;
  const user = logins.users.find((u) => u.login === login && u.password === password && u.accountId === accountId);
  if (user === undefined) {
    logins.loginsRefused += 1;
    return sendError(res, 400, BAD_CREDENTIALS);
  }
  logins.logins += 1;
  const sessionId = randomBytes(18).toString('base64url');
  logins.sessions.set(sessionId, logins.sessionTtlMs > 0 ? performance.now() + logins.sessionTtlMs : Infinity);
  const userId = userIdOf(`user:${user.login}:${user.accountId}`);
  userIds.set(sessionId, userId);
  sendJson(res, 200, { userId, sessionId });
}

/**
 * Where the client's `auth.sid` comes from: a fixed id (REALTY_SESSION_ID), or a session
 * the fleet logs in for and renews (src/redis/fleet-session.ts). The client reads it per
 * request and, on a 401, asks for a newer one once (`renew`) before it gives the 401 up.
 * And `POST /auth` itself.
 */
import { request } from 'undici';
import * as z from 'zod';
import { ApiHttpError, ApiNetworkError, ApiResponseError, LoginRefusedError } from '../errors.js';
import { API_PREFIX } from '../domain/gateway.js';

export const AUTH_PATH = `${API_PREFIX}/auth`;

export interface Session {
  /** The value after `auth.sid`. A secret. */
  id: string;
  /** Which login made it: 0 for a fixed id, then 1, 2, ... for the fleet's logins. */
  generation: number;
}

export interface SessionProvider {
  /** The session to send now. */
  current(): Session;
  /**
   * The gateway refused `generation`: resolves true when a newer session is there to try
   * (this process or another logged in), false when there is none to try (a fixed id).
   * Rejects with LoginRefusedError when the login is refused, or the login's own error.
   */
  renew(generation: number): Promise<boolean>;
}

/** REALTY_SESSION_ID: the same id for ever; a 401 is final. */
export function fixedSession(id: string): SessionProvider {
  const session = Object.freeze({ id, generation: 0 });
  return { current: () => session, renew: () => Promise.resolve(false) };
}

export interface Credentials {
  login: string;
  /** A secret, as the session id. */
  password: string;
  accountId: string;
}

const authAnswerSchema = z.object({ userId: z.string().optional(), sessionId: z.string().min(1) });

/**
 * `POST /realty/v1/auth`: a new session id. 400 (bad credentials) is LoginRefusedError;
 * another status an ApiHttpError, no answer an ApiNetworkError (both worth a later try).
 * Neither the password nor the session id is put in any error.
 */
export async function logIn(baseUrl: string, credentials: Credentials, timeoutMs: number): Promise<string> {
  const endpoint = 'auth';
  let status: number;
  let text: string;
  try {
    const response = await request(`${baseUrl.replace(/\/+$/, '')}${AUTH_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ login: credentials.login, password: credentials.password, accountId: credentials.accountId }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = response.statusCode;
    text = await response.body.text();
  } catch (err) {
    const reason = err && typeof err === 'object' && 'code' in err && typeof err.code === 'string' ? err.code : 'unknown';
    throw new ApiNetworkError(endpoint, reason);
  }
  if (status === 400 || status === 403) throw new LoginRefusedError(status);
  if (status !== 200) throw new ApiHttpError({ status, endpoint });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  const parsed = authAnswerSchema.safeParse(json);
  if (!parsed.success) throw new ApiResponseError(endpoint, status, 'a login is answered with {userId, sessionId}');
  return parsed.data.sessionId;
}

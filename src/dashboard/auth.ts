/**
 * Who may open the dashboard: HTTP basic auth on every route, or, with
 * `--no-auth`, nobody but this machine.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ConfigError, UsageError } from '../errors.js';
import type { LoginThrottle } from './login-throttle.js';

export const REALM = 'realty-batch';
export const LOOPBACK = '127.0.0.1';

export interface Credentials {
  user: string;
  password: string;
}

export interface AccessRequest {
  /** False with `--no-auth`. */
  auth: boolean;
  host?: string | undefined;
  user?: string | undefined;
  password?: string | undefined;
}

export interface Access {
  host: string;
  /** Undefined only with `--no-auth`, on the loopback address. */
  credentials?: Credentials;
}

/**
 * Credentials are required; without them the dashboard listens nowhere but
 * 127.0.0.1 and only when `--no-auth` says so. Never exposes an open page.
 */
export function resolveAccess(request: AccessRequest): Access {
  if (!request.auth) {
    if (request.host !== undefined && request.host !== LOOPBACK) {
      throw new UsageError(
        `--no-auth listens on ${LOOPBACK} only, not on ${request.host}: drop --host, or set DASHBOARD_USER and DASHBOARD_PASSWORD instead of --no-auth.`,
      );
    }
    return { host: LOOPBACK };
  }
  if (!request.user || !request.password) {
    throw new ConfigError(
      'DASHBOARD_USER and DASHBOARD_PASSWORD must both be set: the dashboard asks for them (or give --no-auth to listen on 127.0.0.1 without credentials).',
    );
  }
  return { host: request.host ?? LOOPBACK, credentials: { user: request.user, password: request.password } };
}

/** Fixed-length digests, so neither the comparison's time nor an early exit tells a length. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(createHash('sha256').update(given, 'utf8').digest(), createHash('sha256').update(expected, 'utf8').digest());
}

/** True when an `Authorization: Basic ...` header carries exactly these credentials. */
export function credentialsMatch(header: string | undefined, expected: Credentials): boolean {
  const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header ?? '');
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? '' : decoded.slice(0, colon);
  const password = colon < 0 ? '' : decoded.slice(colon + 1);
  // Both compared every time: which of the two was wrong does not show in the timing.
  const userOk = sameSecret(user, expected.user);
  const passwordOk = sameSecret(password, expected.password);
  return match !== null && colon >= 0 && userOk && passwordOk;
}

export const LOCKED_OUT =
  'Too many wrong user names or passwords came from this address: try again once the seconds of Retry-After have passed.';

/**
 * An `onRequest` hook answering 401 to every request without the credentials.
 * With a `throttle`, an address locked out after wrong credentials is answered
 * 429 with `Retry-After`, the right credentials included, until its lock-out
 * ends; a request without an `Authorization` header tried nothing and is not
 * counted (a browser sends one first to be asked for the password).
 */
export function basicAuth(expected: Credentials, throttle?: LoginThrottle) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const lockedFor = throttle?.lockedFor(request.ip) ?? 0;
    if (lockedFor > 0) {
      return reply
        .code(429)
        .header('Retry-After', String(Math.ceil(lockedFor / 1000)))
        .type('text/plain; charset=utf-8')
        .send(`${LOCKED_OUT}\n`);
    }
    const header = request.headers.authorization;
    if (credentialsMatch(header, expected)) return undefined;
    if (header !== undefined) throttle?.fail(request.ip);
    // fastify: a hook that answers early returns the reply, so the route never runs.
    return reply
      .code(401)
      .header('WWW-Authenticate', `Basic realm="${REALM}"`)
      .type('text/plain; charset=utf-8')
      .send('The realty-batch dashboard needs its user and password.\n');
  };
}

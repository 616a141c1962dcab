/**
 * The session a command talks to the gateway with: REALTY_SESSION_ID as it is, or the
 * fleet's session (REALTY_LOGIN, REALTY_PASSWORD, REALTY_ACCOUNT_ID) taken from Redis or
 * logged in for once (src/redis/fleet-session.ts). A refused login throws LoginRefusedError:
 * one sentence, exit 1, before anything is sent.
 */
import type { Gateway } from '../config.js';
import type { Logger } from '../logger.js';
import { createRealtyClient, type RealtyClient } from '../realty/client.js';
import { fixedSession, logIn, type SessionProvider } from '../realty/session.js';
import type { RedisClient } from '../redis/connection.js';
import { createFleetSession } from '../redis/fleet-session.js';
import type { Keys } from '../redis/keys.js';

/** A login holds the fleet's lock this much longer than its own time-out. */
const LOCK_MARGIN_MS = 5000;

export async function openGatewaySession(
  gateway: Gateway,
  options: { redis: RedisClient; keys: Keys; timeoutMs: number; logger: Logger },
): Promise<SessionProvider> {
  if (gateway.credentials === undefined) return fixedSession(gateway.sessionId);
  const { credentials, apiUrl } = gateway;
  const session = createFleetSession({
    redis: options.redis,
    keys: options.keys,
    credentials,
    sessionKey: gateway.sessionKey,
    logIn: () => logIn(apiUrl, credentials, options.timeoutMs),
    lockMs: options.timeoutMs + LOCK_MARGIN_MS,
    logger: options.logger,
  });
  await session.start();
  return session;
}

/**
 * A client of the gateway with the command's session (openGatewaySession), for the length of
 * `use`, always closed after: what `documents`, `to-sign`, `sign`, `track` and `ledger --resolve` share.
 */
export async function withGatewayClient<T>(
  gateway: Gateway,
  options: { redis: RedisClient; keys: Keys; timeoutMs: number; logger: Logger; connections?: number },
  use: (client: RealtyClient) => Promise<T>,
): Promise<T> {
  const { timeoutMs, connections } = options;
  const client = createRealtyClient({
    baseUrl: gateway.apiUrl,
    session: await openGatewaySession(gateway, options),
    timeoutMs,
    ...(connections !== undefined && { connections }),
  });
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

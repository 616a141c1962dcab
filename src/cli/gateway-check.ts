/**
 * One look at the gateway before a command loads or follows anything: can a connection be
 * opened to REALTY_API_URL's host and port? A wrong url (a refused connection, a host name
 * nobody knows, a host that never answers) otherwise made `run` retry every row for about an
 * hour. Only a TCP connection is opened: nothing is sent, so no session leaves and the
 * gateway counts no call.
 */
import { connect } from 'node:net';
import { GatewayUnreachableError } from '../errors.js';

/** The longest the check waits for a connection, whatever the command's --timeout-ms. */
export const GATEWAY_CHECK_MAX_MS = 10_000;

/** The url as it may be shown: scheme, host, port and path; never a user, password or query. */
export function shownUrl(apiUrl: string): string {
  try {
    const url = new URL(apiUrl);
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return apiUrl;
  }
}

/** Why a connection could not be opened, in words. */
function reasonOf(code: string | undefined): string {
  switch (code) {
    case 'ECONNREFUSED':
      return 'the connection was refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'the host name is not known';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
      return 'the host cannot be reached';
    case 'ECONNRESET':
      return 'the connection was reset';
    default:
      return code ? `the connection failed (${code})` : 'the connection failed';
  }
}

/** Resolves when a connection to the gateway's host opens; throws GatewayUnreachableError (exit 1) when it does not. */
export async function checkGatewayReachable(apiUrl: string, timeoutMs: number): Promise<void> {
  const shown = shownUrl(apiUrl);
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    throw new GatewayUnreachableError(shown, 'it is not a url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new GatewayUnreachableError(shown, 'it is neither http nor https');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const waitMs = Math.min(timeoutMs, GATEWAY_CHECK_MAX_MS);
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new GatewayUnreachableError(shown, `no connection within ${Math.round(waitMs / 1000)} s`));
    }, waitMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new GatewayUnreachableError(shown, reasonOf(err.code)));
    });
  });
}

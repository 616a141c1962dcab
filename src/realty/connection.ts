/**
 * The gateway client's connection: undici's `request` over one keep-alive pool, not global
 * fetch (the WHATWG layers fetch adds, streams, Headers and Response, cost CPU on every call).
 * A call here carries the session's `auth.sid` (renewed once on a 401), one deadline, and the
 * client's errors: ApiHttpError for a status of 300 or more, ApiNetworkError for no answer.
 */
import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { ApiHttpError, ApiNetworkError } from '../errors.js';
import { Deadline, errorBody, networkReason, parseJson, retryAfter } from './response.js';
import type { Session, SessionProvider } from './session.js';

export interface ConnectionOptions {
  baseUrl: string;
  session: SessionProvider;
  /** A call's deadline unless it gives its own; undici's header and body timeouts too. */
  timeoutMs: number;
  connections?: number;
  onCall?: (endpoint: string, status: number, ms: number) => void;
}

/** One call's body and limits; a function body opens a new stream for each send. */
export interface CallInit {
  body?: string | Uint8Array | Readable | (() => Readable | Promise<Readable>);
  contentType?: string;
  contentLength?: number;
  timeoutMs?: number;
  streamed?: boolean;
}

/** An answer's head, and its body as text unless the call was `streamed` (and answered below 300). */
export interface Opened {
  response: Dispatcher.ResponseData;
  text?: string;
}

/** The headers of one session, made again only when the session changes. */
interface SessionHeaders {
  session: Session;
  /** A JSON call's. */
  headers: Record<string, string>;
  /** A call without a body's. */
  readHeaders: Record<string, string>;
}

export class GatewayConnection {
  private readonly baseUrl: string;
  private readonly dispatcher: Agent;
  private readonly session: SessionProvider;
  private readonly timeoutMs: number;
  private readonly onCall: ((endpoint: string, status: number, ms: number) => void) | undefined;
  private made: SessionHeaders | undefined;

  constructor(options: ConnectionOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.dispatcher = new Agent({
      connections: options.connections ?? 128,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    this.session = options.session;
    this.timeoutMs = options.timeoutMs;
    this.onCall = options.onCall;
  }

  /** A JSON call: `payload` sent as JSON on a POST, the answer's status and its body parsed (undefined when it is not JSON). */
  async json(
    method: 'GET' | 'POST',
    path: string,
    endpoint: string,
    payload?: unknown,
    timeoutMs = this.timeoutMs,
  ): Promise<{ status: number; json: unknown }> {
    const { response, text } = await this.open(method, path, endpoint, {
      ...(method === 'POST' && { body: JSON.stringify(payload) }),
      timeoutMs,
    });
    return { status: response.statusCode, json: parseJson(text ?? '') };
  }

  /**
   * A call; on a 401 the session is renewed once and the call made again with the new one.
   * A refused login is thrown as it is (LoginRefusedError); a renewal that has nothing new
   * leaves the 401.
   */
  async open(method: 'GET' | 'POST', path: string, endpoint: string, init: CallInit): Promise<Opened> {
    const current = this.session.current();
    try {
      return await this.send(method, path, endpoint, init, current);
    } catch (err) {
      if (!(err instanceof ApiHttpError) || err.status !== 401 || !(await this.session.renew(current.generation))) throw err;
      // A stream given as it is was read: it cannot be sent again. A function opens a new one.
      if (init.body instanceof Readable) throw new ApiNetworkError(endpoint, 'SESSION_RENEWED', err);
      return this.send(method, path, endpoint, init, this.session.current());
    }
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }

  /**
   * Sends a call and waits for the answer's head. One deadline covers the call: until the
   * head when `streamed`, else the head and the whole body. undici's own header and body
   * timers tick in coarse steps and do not cover the total. The timer is cleared when the
   * call ends (AbortSignal.timeout's would stay armed for the whole timeout: thousands of
   * them a second). A status of 300 or more is an ApiHttpError with the gateway's Error object.
   */
  private async send(method: 'GET' | 'POST', path: string, endpoint: string, init: CallInit, current: Session): Promise<Opened> {
    // A body that opens its stream is opened for this send (a stream is sent once), before the
    // call starts: an opening that refuses (a file no longer the one checked) sends nothing at all.
    const body = typeof init.body === 'function' ? await init.body() : init.body;
    const { headers, readHeaders } = this.headersOf(current);
    const started = performance.now();
    let response: Dispatcher.ResponseData;
    const signal = new Deadline();
    const deadline = setTimeout(() => signal.expire(), init.timeoutMs ?? this.timeoutMs);
    let text: string | undefined;
    try {
      response = await request(
        `${this.baseUrl}${path}`,
        init.body === undefined
          ? { method, headers: readHeaders, dispatcher: this.dispatcher, signal }
          : { method, headers: withBodyHeaders(headers, init), body, dispatcher: this.dispatcher, signal },
      );
      if (!init.streamed || response.statusCode >= 300) text = await response.body.text();
    } catch (err) {
      this.onCall?.(endpoint, 0, performance.now() - started);
      throw new ApiNetworkError(endpoint, networkReason(err), err);
    } finally {
      clearTimeout(deadline);
      // An answer that came before the whole body was read (a 401 at once): the file is closed.
      if (body instanceof Readable && !body.readableEnded) body.destroy();
    }
    this.onCall?.(endpoint, response.statusCode, performance.now() - started);
    if (response.statusCode >= 300) {
      throw new ApiHttpError({
        status: response.statusCode,
        endpoint,
        body: errorBody(parseJson(text ?? ''), text ?? ''),
        retryAfterSeconds: retryAfter(response.headers['retry-after']),
      });
    }
    return text === undefined ? { response } : { response, text };
  }

  private headersOf(current: Session): SessionHeaders {
    if (this.made?.session !== current) {
      const authorization = `auth.sid ${current.id}`;
      this.made = {
        session: current,
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
        readHeaders: { accept: 'application/json', authorization },
      };
    }
    return this.made;
  }
}

/** A call with a body's headers: a JSON body (every deal's two calls) takes the session's as they are, no copy a call. */
function withBodyHeaders(headers: Record<string, string>, init: CallInit): Record<string, string> {
  if (init.contentType === undefined && init.contentLength === undefined) return headers;
  return {
    ...headers,
    ...(init.contentType !== undefined && { 'content-type': init.contentType }),
    ...(init.contentLength !== undefined && { 'content-length': String(init.contentLength) }),
  };
}

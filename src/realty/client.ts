/**
 * The typed client of the gateway: suggest, docflow creation and the news feed, exactly
 * as the gateway's contract spells them; and a docflow's later operations (read, send,
 * sign a file, download a file) as the public documentation shows them. Every call fails
 * the same way: ApiHttpError with the status (decide() in src/worker/deal/gateway-failure.ts turns it into pause,
 * retry or a final outcome), ApiNetworkError for no answer or a timeout, ApiResponseError
 * for an answer it cannot read. undici's `request` over a keep-alive pool, not global
 * fetch: the WHATWG layers fetch adds (streams, Headers, Response) cost CPU on every call.
 */
import { Readable, Transform } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { ApiHttpError, ApiNetworkError, ApiResponseError } from '../errors.js';
import { fastDocflowResponse, fastSuggestResponse } from './answer-precheck.js';
import { fastNewsPage } from './news-precheck.js';
import { checked, Deadline, errorBody, fileNameOf, header, networkReason, parseJson, retryAfter } from './response.js';
import { fixedSession, type Session, type SessionProvider } from './session.js';
import {
  contentPointerSchema,
  CONTENTS_PATH,
  type ContentPointer,
  docflowFilePath,
  docflowPath,
  docflowPathOf,
  docflowSchema,
  fileSignaturesPath,
  docflowResponseSchema,
  newsPageSchema,
  NEWS_PATH,
  suggestResponseSchema,
  SUGGEST_PATH,
  type Docflow,
  type DocflowRequest,
  type DocflowResponse,
  type NewsPage,
  type SuggestCandidate,
  type SuggestRequest,
} from '../domain/gateway.js';

export interface RealtyClientOptions {
  /** The base url, e.g. `https://host`; the client adds `/realty/v1/...`. */
  baseUrl: string;
  /** The value after `auth.sid`. A secret: it goes into the header and nowhere else. */
  sessionId?: string;
  /**
   * Instead of `sessionId`: the session is read per request; on a 401 the client asks it for
   * a newer one once and sends the request again with it (a streamed body cannot be sent
   * again: that call fails with ApiNetworkError `SESSION_RENEWED`, to be tried again; a body
   * given as a function that opens the stream is opened again and sent with the new session).
   */
  session?: SessionProvider;
  /** Per request, headers and body each. */
  timeoutMs: number;
  /** Sockets kept open to the gateway. */
  connections?: number;
  /** Called once per finished call, for metrics: endpoint, status (0 = no answer), milliseconds. */
  onCall?: (endpoint: string, status: number, ms: number) => void;
  /** The most one downloaded file may hold (MAX_DOWNLOAD_BYTES when not given). */
  maxDownloadBytes?: number;
}

/**
 * The most one file downloaded from the gateway may hold: its results are an extract and a
 * signature, its applications a few pages, all well under the 50 MB it takes itself. A larger
 * answer (a fault, or a hostile gateway) would fill the disk, or memory through `bytes()`.
 */
export const MAX_DOWNLOAD_BYTES = 100 * 1024 * 1024;

/** A downloaded file past the cap: refused when announced, or as soon as its bytes pass it. */
export class DownloadTooLargeError extends Error {
  readonly code = 'ERR_DOWNLOAD_TOO_LARGE';
  constructor(fileId: string, limit: number) {
    super(`The gateway's file ${fileId} is larger than ${formatBytes(limit)}, the most a download takes, so it was not kept.`);
  }
}

const formatBytes = (bytes: number): string =>
  bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`;

export interface CreatedDocflow {
  status: 200 | 201;
  docflow: DocflowResponse;
}

/** A file being downloaded: read `stream` to its end (or destroy it), or call `bytes()`, once. */
export interface DownloadedFile {
  /** The answer's Content-Type (`application/pdf`, `application/x-pkcs7-signature`, ...); '' without one. */
  contentType: string;
  /** The answer's Content-Length, when it sent one. */
  length: number | undefined;
  /** The file name the gateway suggests (Content-Disposition), when it does. */
  fileName: string | undefined;
  /**
   * The body. Its errors are ApiNetworkError; it fails when no byte comes for `timeoutMs`
   * (the time to write it to disk is not counted against it, whatever the file's size).
   */
  stream: Readable;
  /** The whole body in memory. */
  bytes(): Promise<Buffer>;
}

export interface RealtyClient {
  suggest(query: SuggestRequest): Promise<SuggestCandidate[]>;
  /** `timeoutMs`: this call's own deadline, when shorter than the client's. */
  createDocflow(docflowType: string, body: DocflowRequest<object>, options?: { timeoutMs?: number }): Promise<CreatedDocflow>;
  /** The news feed after `after` (without it: no items, the newest token: the feed from now). */
  news(after?: string): Promise<NewsPage>;
  /** `GET /docflows/{id}`: the docflow as it is now (404: unknown). */
  getDocflow(docflowId: string): Promise<Docflow>;
  /** `POST /docflows/{id}`: sends a docflow whose signatures are all there (400 while one is missing). */
  sendDocflow(docflowId: string): Promise<Docflow>;
  /**
   * `POST /docflows/{id}/files/{fileId}/signatures`: a detached signature's bytes (or a
   * stream of them: not replayable, so a caller that retries passes bytes). `contentType`
   * defaults to `application/x-pkcs7-signature`.
   */
  signFile(docflowId: string, fileId: string, signature: Uint8Array | Readable, options?: { contentType?: string }): Promise<void>;
  /**
   * `POST /contents`: uploads a PDF, XML or detached signature, streamed (`length` bytes,
   * sent as Content-Length). A stream is not replayable: given as a function that opens it,
   * the upload is sent again, the file opened anew, after a 401 renewed the session (no try
   * spent); given as a stream, that 401 fails it with ApiNetworkError `SESSION_RENEWED`. The
   * function may open it asynchronously (checking the file first): its rejection is thrown as
   * it is, and no request is made.
   */
  uploadContent(
    body: Readable | (() => Readable | Promise<Readable>),
    contentType: string,
    length: number,
    options?: { timeoutMs?: number },
  ): Promise<ContentPointer>;
  /**
   * `GET /docflows/{id}/files/{fileId}`: the file's bytes, as a stream. A file past
   * `maxDownloadBytes` fails with DownloadTooLargeError: at once when its Content-Length says
   * so, else its stream as soon as its bytes pass it.
   */
  downloadFile(docflowId: string, fileId: string): Promise<DownloadedFile>;
  close(): Promise<void>;
}

/** One call's body and limits; a function body opens a new stream for each send. */
interface CallInit {
  body?: string | Uint8Array | Readable | (() => Readable | Promise<Readable>);
  contentType?: string;
  contentLength?: number;
  timeoutMs?: number;
  streamed?: boolean;
}

export const SIGNATURE_CONTENT_TYPE = 'application/x-pkcs7-signature';

export function createRealtyClient(options: RealtyClientOptions): RealtyClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const dispatcher = new Agent({
    connections: options.connections ?? 128,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const session = options.session ?? fixedSession(options.sessionId ?? '');
  if (options.session === undefined && !options.sessionId) throw new Error('A gateway client needs a sessionId or a session.');
  /** The headers of one session, made again only when the session changes. */
  let made: { session: Session; headers: Record<string, string>; readHeaders: Record<string, string> } | undefined;
  const headersOf = (current: Session) => {
    if (made?.session !== current) {
      const authorization = `auth.sid ${current.id}`;
      made = {
        session: current,
        headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
        readHeaders: { accept: 'application/json', authorization },
      };
    }
    return made;
  };

  /**
   * A call; on a 401 the session is renewed once and the call made again with the new one.
   * A refused login is thrown as it is (LoginRefusedError); a renewal that has nothing new
   * leaves the 401.
   */
  async function open(
    method: 'GET' | 'POST',
    path: string,
    endpoint: string,
    init: CallInit,
  ): Promise<{ response: Dispatcher.ResponseData; text?: string }> {
    const current = session.current();
    try {
      return await openOnce(method, path, endpoint, init, current);
    } catch (err) {
      if (!(err instanceof ApiHttpError) || err.status !== 401 || !(await session.renew(current.generation))) throw err;
      // A stream given as it is was read: it cannot be sent again. A function opens a new one.
      if (init.body instanceof Readable) throw new ApiNetworkError(endpoint, 'SESSION_RENEWED', err);
      return openOnce(method, path, endpoint, init, session.current());
    }
  }

  /**
   * Opens a call and waits for the answer's head. One deadline covers the call: until the
   * head when `streamed`, else the head and the whole body. undici's own header and body
   * timers tick in coarse steps and do not cover the total. The timer is cleared when the
   * call ends (AbortSignal.timeout's would stay armed for the whole timeout: thousands of
   * them a second). A status of 300 or more is an ApiHttpError with the gateway's Error object.
   */
  async function openOnce(
    method: 'GET' | 'POST',
    path: string,
    endpoint: string,
    init: CallInit,
    current: Session,
  ): Promise<{ response: Dispatcher.ResponseData; text?: string }> {
    // A body that opens its stream is opened for this send (a stream is sent once), before the
    // call starts: an opening that refuses (a file no longer the one checked) sends nothing at all.
    const body = typeof init.body === 'function' ? await init.body() : init.body;
    const { headers, readHeaders } = headersOf(current);
    const started = performance.now();
    let response: Dispatcher.ResponseData;
    const signal = new Deadline();
    const deadline = setTimeout(() => signal.expire(), init.timeoutMs ?? options.timeoutMs);
    let text: string | undefined;
    try {
      response = await request(
        `${baseUrl}${path}`,
        init.body === undefined
          ? { method, headers: readHeaders, dispatcher, signal }
          : {
              method,
              // A JSON body (every deal's two calls) takes the session's headers as they are: no copy a call.
              headers:
                init.contentType === undefined && init.contentLength === undefined
                  ? headers
                  : {
                      ...headers,
                      ...(init.contentType !== undefined && { 'content-type': init.contentType }),
                      ...(init.contentLength !== undefined && { 'content-length': String(init.contentLength) }),
                    },
              body,
              dispatcher,
              signal,
            },
      );
      if (!init.streamed || response.statusCode >= 300) text = await response.body.text();
    } catch (err) {
      options.onCall?.(endpoint, 0, performance.now() - started);
      throw new ApiNetworkError(endpoint, networkReason(err), err);
    } finally {
      clearTimeout(deadline);
      // An answer that came before the whole body was read (a 401 at once): the file is closed.
      if (body instanceof Readable && !body.readableEnded) body.destroy();
    }
    options.onCall?.(endpoint, response.statusCode, performance.now() - started);
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

  async function call(
    method: 'GET' | 'POST',
    path: string,
    endpoint: string,
    payload?: unknown,
    timeoutMs = options.timeoutMs,
  ): Promise<{ status: number; json: unknown }> {
    const { response, text } = await open(method, path, endpoint, {
      ...(method === 'POST' && { body: JSON.stringify(payload) }),
      timeoutMs,
    });
    return { status: response.statusCode, json: parseJson(text ?? '') };
  }

  /** A later operation answers the docflow with 200; any other 2xx is an answer the client cannot trust. */
  async function docflowCall(method: 'GET' | 'POST', docflowId: string, endpoint: string): Promise<Docflow> {
    const { status, json } = await call(method, docflowPathOf(docflowId), endpoint, method === 'POST' ? {} : undefined);
    if (status !== 200) throw new ApiResponseError(endpoint, status, 'a docflow is answered with 200');
    return checked(docflowSchema, json, endpoint, status);
  }

  return {
    async suggest(query) {
      const { status, json } = await call('POST', SUGGEST_PATH, 'suggest', query);
      return fastSuggestResponse(json) ?? checked(suggestResponseSchema, json, 'suggest', status);
    },
    async createDocflow(docflowType, body, callOptions) {
      const { status, json } = await call(
        'POST',
        docflowPath(docflowType),
        'docflows',
        body,
        Math.min(options.timeoutMs, callOptions?.timeoutMs ?? options.timeoutMs),
      );
      if (status !== 200 && status !== 201) {
        throw new ApiResponseError('docflows', status, 'the contract allows only 200 and 201 for a created docflow');
      }
      return { status, docflow: fastDocflowResponse(json) ?? checked(docflowResponseSchema, json, 'docflows', status) };
    },
    async news(after) {
      const { status, json } = await call(
        'GET',
        after === undefined ? NEWS_PATH : `${NEWS_PATH}?after=${encodeURIComponent(after)}`,
        'news',
      );
      return fastNewsPage(json) ?? checked(newsPageSchema, json, 'news', status);
    },
    getDocflow(docflowId) {
      return docflowCall('GET', docflowId, 'docflow');
    },
    sendDocflow(docflowId) {
      return docflowCall('POST', docflowId, 'send');
    },
    async signFile(docflowId, fileId, signature, signOptions) {
      await open('POST', fileSignaturesPath(docflowId, fileId), 'signature', {
        body: signature,
        contentType: signOptions?.contentType ?? SIGNATURE_CONTENT_TYPE,
      });
    },
    async uploadContent(body, contentType, length, uploadOptions) {
      const endpoint = 'contents';
      // Its own deadline when given: a large file's body takes longer to send than a JSON call's.
      const { response, text } = await open('POST', CONTENTS_PATH, endpoint, {
        body,
        contentType,
        contentLength: length,
        ...(uploadOptions?.timeoutMs !== undefined && { timeoutMs: uploadOptions.timeoutMs }),
      });
      if (response.statusCode !== 201 && response.statusCode !== 200) {
        throw new ApiResponseError(endpoint, response.statusCode, 'an upload is answered with 201');
      }
      return checked(contentPointerSchema, parseJson(text ?? ''), endpoint, response.statusCode);
    },
    async downloadFile(docflowId, fileId) {
      const endpoint = 'file';
      const { response } = await open('GET', docflowFilePath(docflowId, fileId), endpoint, { streamed: true });
      if (response.statusCode !== 200) {
        await response.body.dump().catch(() => undefined);
        throw new ApiResponseError(endpoint, response.statusCode, 'a file is answered with 200');
      }
      const limit = options.maxDownloadBytes ?? MAX_DOWNLOAD_BYTES;
      const announced = header(response.headers['content-length'])?.trim();
      const length = announced !== undefined && /^\d+$/.test(announced) ? Number(announced) : undefined;
      if (length !== undefined && length > limit) {
        response.body.destroy();
        throw new DownloadTooLargeError(fileId, limit);
      }
      // The body's own errors (a reset, no byte within timeoutMs) become ApiNetworkError.
      let received = 0;
      const stream = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          received += chunk.length;
          if (received > limit) callback(new DownloadTooLargeError(fileId, limit));
          else callback(null, chunk);
        },
      });
      response.body.on('error', (err) => stream.destroy(new ApiNetworkError(endpoint, networkReason(err), err)));
      stream.on('close', () => {
        if (!response.body.destroyed) response.body.destroy();
      });
      response.body.pipe(stream);
      return {
        contentType: header(response.headers['content-type']) ?? '',
        length,
        fileName: fileNameOf(header(response.headers['content-disposition'])),
        stream,
        async bytes() {
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          return Buffer.concat(chunks);
        },
      };
    },
    async close() {
      await dispatcher.close();
    },
  };
}

/**
 * The typed client of the gateway: suggest, docflow creation and the news feed, exactly
 * as the gateway's contract spells them; and a docflow's later operations (read, send,
 * sign a file, download a file) as the public documentation shows them. Every call fails
 * the same way: ApiHttpError with the status (decide() in src/worker/deal/gateway-failure.ts turns it into pause,
 * retry or a final outcome), ApiNetworkError for no answer or a timeout, ApiResponseError
 * for an answer it cannot read. The calls themselves (the pool, the session, the deadline)
 * are the connection's (connection.ts); here, each operation's path and the answers it takes.
 */
import { Transform, type Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { ApiNetworkError, ApiResponseError } from '../errors.js';
import { fastDocflowResponse, fastSuggestResponse } from './answer-precheck.js';
import { fastNewsPage } from './news-precheck.js';
import { GatewayConnection } from './connection.js';
import { checked, fileNameOf, header, networkReason, parseJson } from './response.js';
import { fixedSession, type SessionProvider } from './session.js';
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

export const SIGNATURE_CONTENT_TYPE = 'application/x-pkcs7-signature';

export function createRealtyClient(options: RealtyClientOptions): RealtyClient {
  const client = new GatewayClient(options);
  // Each operation an own property, bound: callers wrap one operation in a spread of the client
  // ({ ...client, news }, which copies own properties only), or hand one on by itself.
  return {
    suggest: client.suggest.bind(client),
    createDocflow: client.createDocflow.bind(client),
    news: client.news.bind(client),
    getDocflow: client.getDocflow.bind(client),
    sendDocflow: client.sendDocflow.bind(client),
    signFile: client.signFile.bind(client),
    uploadContent: client.uploadContent.bind(client),
    downloadFile: client.downloadFile.bind(client),
    close: client.close.bind(client),
  };
}

/** The operations, each on the connection (connection.ts): its path, the statuses it takes and its answer's checks. */
class GatewayClient implements RealtyClient {
  private readonly connection: GatewayConnection;
  private readonly timeoutMs: number;
  private readonly maxDownloadBytes: number;

  constructor(options: RealtyClientOptions) {
    if (options.session === undefined && !options.sessionId) throw new Error('A gateway client needs a sessionId or a session.');
    this.connection = new GatewayConnection({
      baseUrl: options.baseUrl,
      session: options.session ?? fixedSession(options.sessionId ?? ''),
      timeoutMs: options.timeoutMs,
      connections: options.connections,
      onCall: options.onCall,
    });
    this.timeoutMs = options.timeoutMs;
    this.maxDownloadBytes = options.maxDownloadBytes ?? MAX_DOWNLOAD_BYTES;
  }

  async suggest(query: SuggestRequest): Promise<SuggestCandidate[]> {
    const { status, json } = await this.connection.json('POST', SUGGEST_PATH, 'suggest', query);
    return fastSuggestResponse(json) ?? checked(suggestResponseSchema, json, 'suggest', status);
  }

  async createDocflow(docflowType: string, body: DocflowRequest<object>, callOptions?: { timeoutMs?: number }): Promise<CreatedDocflow> {
    const { status, json } = await this.connection.json(
      'POST',
      docflowPath(docflowType),
      'docflows',
      body,
      Math.min(this.timeoutMs, callOptions?.timeoutMs ?? this.timeoutMs),
    );
    if (status !== 200 && status !== 201) {
      throw new ApiResponseError('docflows', status, 'the contract allows only 200 and 201 for a created docflow');
    }
    return { status, docflow: fastDocflowResponse(json) ?? checked(docflowResponseSchema, json, 'docflows', status) };
  }

  async news(after?: string): Promise<NewsPage> {
    const { status, json } = await this.connection.json(
      'GET',
      after === undefined ? NEWS_PATH : `${NEWS_PATH}?after=${encodeURIComponent(after)}`,
      'news',
    );
    return fastNewsPage(json) ?? checked(newsPageSchema, json, 'news', status);
  }

  getDocflow(docflowId: string): Promise<Docflow> {
    return this.docflowCall('GET', docflowId, 'docflow');
  }

  sendDocflow(docflowId: string): Promise<Docflow> {
    return this.docflowCall('POST', docflowId, 'send');
  }

  async signFile(
    docflowId: string,
    fileId: string,
    signature: Uint8Array | Readable,
    signOptions?: { contentType?: string },
  ): Promise<void> {
    await this.connection.open('POST', fileSignaturesPath(docflowId, fileId), 'signature', {
      body: signature,
      contentType: signOptions?.contentType ?? SIGNATURE_CONTENT_TYPE,
    });
  }

  async uploadContent(
    body: Readable | (() => Readable | Promise<Readable>),
    contentType: string,
    length: number,
    uploadOptions?: { timeoutMs?: number },
  ): Promise<ContentPointer> {
    const endpoint = 'contents';
    // Its own deadline when given: a large file's body takes longer to send than a JSON call's.
    const { response, text } = await this.connection.open('POST', CONTENTS_PATH, endpoint, {
      body,
      contentType,
      contentLength: length,
      ...(uploadOptions?.timeoutMs !== undefined && { timeoutMs: uploadOptions.timeoutMs }),
    });
    if (response.statusCode !== 201 && response.statusCode !== 200) {
      throw new ApiResponseError(endpoint, response.statusCode, 'an upload is answered with 201');
    }
    return checked(contentPointerSchema, parseJson(text ?? ''), endpoint, response.statusCode);
  }

  async downloadFile(docflowId: string, fileId: string): Promise<DownloadedFile> {
    const endpoint = 'file';
    const { response } = await this.connection.open('GET', docflowFilePath(docflowId, fileId), endpoint, { streamed: true });
    if (response.statusCode !== 200) {
      await response.body.dump().catch(() => undefined);
      throw new ApiResponseError(endpoint, response.statusCode, 'a file is answered with 200');
    }
    const limit = this.maxDownloadBytes;
    const announced = header(response.headers['content-length'])?.trim();
    const length = announced !== undefined && /^\d+$/.test(announced) ? Number(announced) : undefined;
    if (length !== undefined && length > limit) {
      response.body.destroy();
      throw new DownloadTooLargeError(fileId, limit);
    }
    const stream = cappedBody(response, endpoint, fileId, limit);
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
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  /** A later operation answers the docflow with 200; any other 2xx is an answer the client cannot trust. */
  private async docflowCall(method: 'GET' | 'POST', docflowId: string, endpoint: string): Promise<Docflow> {
    const { status, json } = await this.connection.json(method, docflowPathOf(docflowId), endpoint, method === 'POST' ? {} : undefined);
    if (status !== 200) throw new ApiResponseError(endpoint, status, 'a docflow is answered with 200');
    return checked(docflowSchema, json, endpoint, status);
  }
}

/**
 * A download's body, failed with DownloadTooLargeError as soon as its bytes pass `limit`. Its own
 * errors (a reset, no byte within timeoutMs) become ApiNetworkError; closing it closes the answer.
 */
function cappedBody(response: Dispatcher.ResponseData, endpoint: string, fileId: string, limit: number): Transform {
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
  return stream;
}

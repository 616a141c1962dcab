/**
 * `POST /realty/v1/contents`: a PDF, XML or detached signature uploaded before a docflow
 * names it (realty-api-notes.md). The body is counted as it streams, never kept: the sandbox
 * only remembers the ids it gave, so that `--strict-contents` can refuse a docflow naming a
 * content it never received (a gateway would not find it). Uploads take no injected faults:
 * a test can fail the docflow calls (`--fault-5xx 1`) while the uploads before them pass.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { contentLink, type ApiErrorBody } from '../domain/gateway.js';
import { contentsOf } from './content-registry.js';
import { addLatency, authenticate, sendUnauthorized, type Runtime } from './handlers.js';
import { sendError, sendJson } from './http.js';

export const CONTENT_TYPES = ['application/pdf', 'application/xml', 'application/x-pkcs7-signature', 'application/pgp-signature'];
/** The gateway's limit on one content. */
export const MAX_CONTENT_BYTES = 50 * 1024 * 1024;

const invalid = (message: string, target: string): ApiErrorBody => ({ code: 'validation', message, target });

export async function handleUploadContent(rt: Runtime, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (authenticate(rt, req) === undefined) return sendUnauthorized(res);
  addLatency(rt, req, res);
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!CONTENT_TYPES.includes(type)) {
    req.resume();
    return sendError(res, 400, invalid(`The Content-Type must be one of ${CONTENT_TYPES.join(', ')}`, 'Content-Type'));
  }
  const size = await countBody(req);
  if (size === 'tooLarge')
    return sendError(res, 400, invalid(`The content is larger than ${MAX_CONTENT_BYTES} bytes`, 'body'), { connection: 'close' });
  if (size === 0) return sendError(res, 400, invalid('The content is empty', 'body'));
  const contents = contentsOf(rt);
  const id = randomUUID();
  contents.ids.add(id);
  contents.uploads += 1;
  contents.bytes += size;
  const link = contentLink(rt.state.baseUrl, id);
  sendJson(res, 201, { id, contentLink: link }, { location: link });
}

/** The body's length, read and dropped chunk by chunk. */
function countBody(req: IncomingMessage): Promise<number | 'tooLarge'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_CONTENT_BYTES) {
    req.resume();
    return Promise.resolve('tooLarge');
  }
  return new Promise((resolve, reject) => {
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_CONTENT_BYTES) resolve('tooLarge');
    });
    req.on('end', () => resolve(size > MAX_CONTENT_BYTES ? 'tooLarge' : size));
    req.on('error', reject);
  });
}

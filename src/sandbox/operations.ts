/**
 * The operations on a docflow after its creation: read it, send it, sign its files,
 * download them; and the sandbox's own payment endpoint. Each follows the gateway's order
 * as creation does: auth, latency, faults (from their own random stream), body, account,
 * the docflow, then the work. Every accepted session sees every docflow: the sessions are
 * users of one account, as in the news feed.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorBody } from '../domain/gateway.js';
import { contentTypeOf, extensionOf, fileBytes } from './files.js';
import { addLatency, authenticate, FAULT_BODIES, FORBIDDEN, injectFault, type Runtime } from './handlers.js';
import { readRawBody, sendBytes, sendJson } from './http.js';
import { fileOf, viewOf, type StoredDocflow } from './docflow-record.js';

export type Operation = 'get' | 'send' | 'signature' | 'file';

const NO_DOCFLOW: ApiErrorBody = { code: 'notFound', message: 'There is no docflow with this id', target: 'docflowId' };
const NO_FILE: ApiErrorBody = { code: 'notFound', message: 'This docflow has no file with this id', target: 'fileId' };

/**
 * Auth, latency, a fault, then (for a change) the account's restriction, and the docflow.
 * Answers and returns undefined when the call ends there.
 */
async function begin(
  rt: Runtime,
  req: IncomingMessage,
  res: ServerResponse,
  operation: Operation,
  docflowId: string,
  answer: (status: number, body: unknown, headers?: Record<string, string>) => void,
  readBody: boolean,
): Promise<{ docflow: StoredDocflow; body?: Buffer } | undefined> {
  const session = authenticate(rt, req);
  if (session === undefined) {
    answer(401, { code: 'unauthorized', message: 'The Authorization header is absent or its value is incorrect' });
    return undefined;
  }
  addLatency(rt, req, res);
  const fault = injectFault(rt, req, rt.operationsRandom);
  if (fault === 'reset') {
    rt.state.countOperationCall(operation, 'reset');
    return undefined;
  }
  if (fault !== undefined) {
    answer(fault, FAULT_BODIES[fault] ?? {});
    return undefined;
  }
  let body: Buffer | undefined;
  if (readBody) {
    const raw = await readRawBody(req);
    if (!raw.ok) {
      answer(400, raw.error, raw.close ? { connection: 'close' } : undefined);
      return undefined;
    }
    body = raw.bytes;
  }
  if (operation !== 'get' && operation !== 'file' && rt.config.restrictedSessions.has(session)) {
    answer(403, FORBIDDEN);
    return undefined;
  }
  const docflow = rt.state.get(docflowId);
  if (docflow === undefined) {
    answer(404, NO_DOCFLOW);
    return undefined;
  }
  return body === undefined ? { docflow } : { docflow, body };
}

function answering(rt: Runtime, res: ServerResponse, operation: Operation) {
  return (status: number, body: unknown, headers?: Record<string, string>): void => {
    rt.state.countOperationCall(operation, status);
    sendJson(res, status, body, headers);
  };
}

/** `GET /docflows/{id}`: the docflow as it is now. */
export async function handleGetDocflow(rt: Runtime, req: IncomingMessage, res: ServerResponse, docflowId: string): Promise<void> {
  const answer = answering(rt, res, 'get');
  const found = await begin(rt, req, res, 'get', docflowId, answer, false);
  if (found !== undefined) answer(200, viewOf(found.docflow));
}

/**
 * `POST /docflows/{id}`: sends a docflow suspended for its signers once every application
 * file is signed (200, queued); 400 while a file lacks its signature, or while the state
 * duty is unpaid (that one the register learns of by itself). A docflow with nothing to
 * send is answered as it is (200): a send repeated after a lost answer does no harm.
 */
export async function handleSendDocflow(rt: Runtime, req: IncomingMessage, res: ServerResponse, docflowId: string): Promise<void> {
  const answer = answering(rt, res, 'send');
  const found = await begin(rt, req, res, 'send', docflowId, answer, true);
  if (found === undefined) return;
  const now = performance.now();
  rt.state.advance(now);
  const outcome = rt.state.send(found.docflow, now);
  if (outcome.kind === 'unsigned') {
    return answer(400, {
      code: 'validation',
      message: 'The application is not signed: every file of the signature requirement needs a signature before the docflow is sent',
      target: 'requirements.signature',
      errors: outcome.files.map((id) => ({ code: 'signatureMissing', message: `file ${id} has no signature`, target: `files.${id}` })),
    });
  }
  if (outcome.kind === 'unpaid') {
    return answer(400, {
      code: 'validation',
      message: 'The state duty is not paid; the register sends the docflow on once it is',
      target: 'requirements.payment',
    });
  }
  answer(200, viewOf(found.docflow));
}

/** `POST /docflows/{id}/files/{fileId}/signatures`: a detached signature's bytes; 204. */
export async function handleSignFile(
  rt: Runtime,
  req: IncomingMessage,
  res: ServerResponse,
  docflowId: string,
  fileId: string,
): Promise<void> {
  const answer = answering(rt, res, 'signature');
  const found = await begin(rt, req, res, 'signature', docflowId, answer, true);
  if (found === undefined) return;
  if (found.body === undefined || found.body.length === 0) {
    return answer(400, { code: 'validation', message: "The body must be the detached signature's bytes", target: 'body' });
  }
  const signed = rt.state.sign(found.docflow, fileId);
  if (signed === 'unknown') return answer(404, NO_FILE);
  if (signed === 'closed') {
    return answer(409, {
      code: 'conflict',
      message: 'This file takes no signature: only the application files of a docflow waiting for its signers do',
      target: 'fileId',
    });
  }
  rt.state.countOperationCall('signature', 204);
  res.writeHead(204).end();
}

/** `GET /docflows/{id}/files/{fileId}`: an application to sign, a result file or a result's signature. */
export async function handleDownloadFile(
  rt: Runtime,
  req: IncomingMessage,
  res: ServerResponse,
  docflowId: string,
  fileId: string,
): Promise<void> {
  const answer = answering(rt, res, 'file');
  const found = await begin(rt, req, res, 'file', docflowId, answer, false);
  if (found === undefined) return;
  const { docflow } = found;
  const file = fileOf(docflow, fileId);
  if (file === undefined) return answer(404, NO_FILE);
  rt.state.countOperationCall('file', 200);
  sendBytes(res, 200, fileBytes(file, { docflowId: docflow.docflowId, object: docflow.plan.object, seq: docflow.plan.seq }), {
    'content-type': contentTypeOf(file),
    'content-disposition': `attachment; filename="${file.id}.${extensionOf(file)}"`,
  });
}

/** `POST /__sandbox/payments/<uin>`: pays the state duty of a docflow suspended on it (no session needed). */
export function handlePayment(rt: Runtime, res: ServerResponse, uin: string): void {
  const paid = rt.state.pay(uin);
  if (paid.kind === 'unknown') {
    return sendJson(res, 404, { code: 'notFound', message: 'No docflow waits for a payment with this uin', target: 'uin' });
  }
  if (paid.kind === 'already') return sendJson(res, 409, { code: 'conflict', message: 'This uin is paid already', target: 'uin' });
  const { docflow } = paid;
  sendJson(res, 200, { uin, docflowId: docflow.docflowId, amount: docflow.plan.payment?.amount });
}

/**
 * `POST /realty/v1/docflows/{type}`, for every type the sandbox knows (docflow-types.ts), in
 * the gateway's order: auth, latency, faults, body, contract (the type and its checks),
 * account, register, the requestId rule, then the docflow acted on (a packet's or an
 * action's: after the rule, so that a dedupe repeat of a cancellation is answered with its
 * first docflow rather than refused because the first one worked), then the work itself.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiErrorBody } from '../domain/gateway.js';
import { unknownContents } from './content-registry.js';
import { creationViewOf, dateOf, type StoredDocflow } from './docflow-record.js';
import { SANDBOX_DOCFLOW_TYPES, docflowTypeOf } from './docflow-types.js';
import { validationError } from './docflow-validation.js';
import { rollLost } from './faults.js';
import {
  addLatency,
  authenticate,
  drop,
  EGRON_UNAVAILABLE,
  FAULT_BODIES,
  FORBIDDEN,
  injectFault,
  UNAUTHORIZED,
  type Runtime,
} from './handlers.js';
import { readJsonBody, sendJson } from './http.js';
import { planDocflow } from './lifecycle.js';
import { userIdOf } from './news.js';
import { normaliseName } from './register-compare.js';
import type { DocflowTypeSpec } from './types/spec.js';

function regionOf(object: StoredDocflow['object']): string | undefined {
  const address = object?.address;
  const region = typeof address === 'object' && address !== null ? (address as { region?: unknown }).region : undefined;
  return typeof region === 'string' ? region : undefined;
}

type Checked = { spec: DocflowTypeSpec; object: StoredDocflow['object'] } | { refusal: { status: number; body: ApiErrorBody } };

/** The type, its contract, the account and the register: what refuses a request whatever the sandbox holds. */
function checkRequest(rt: Runtime, docflowType: string, body: unknown, session: string): Checked {
  const spec = docflowTypeOf(docflowType);
  if (spec === undefined) {
    const message = `The docflow type is not supported; the sandbox knows ${SANDBOX_DOCFLOW_TYPES.join(', ')}`;
    return { refusal: { status: 400, body: { code: 'validation', message, target: 'docflowType' } } };
  }
  const problems = spec.check(body);
  if (problems.length === 0) problems.push(...unknownContents(rt, spec.contents(body)));
  if (problems.length > 0) return { refusal: { status: 400, body: validationError(problems) } };
  if (rt.config.restrictedSessions.has(session)) return { refusal: { status: 403, body: FORBIDDEN } };
  const object = spec.objectOf?.(body);
  const region = regionOf(object);
  if (region !== undefined && rt.config.egronRegions.has(normaliseName(region))) {
    return { refusal: { status: 501, body: EGRON_UNAVAILABLE } };
  }
  return { spec, object };
}

export async function handleCreateDocflow(rt: Runtime, req: IncomingMessage, res: ServerResponse, docflowType: string): Promise<void> {
  rt.onCall?.(Date.now());
  const answer = (status: number, body: unknown, headers?: Record<string, string>): void => {
    rt.state.countDocflowCall(status);
    sendJson(res, status, body, headers);
  };
  const session = authenticate(rt, req);
  if (session === undefined) return answer(401, UNAUTHORIZED);
  addLatency(rt, req, res);
  const fault = injectFault(rt, req);
  if (fault === 'reset') return rt.state.countDocflowCall('reset');
  if (fault !== undefined) return answer(fault, FAULT_BODIES[fault] ?? {});

  const body = await readJsonBody(req);
  if (!body.ok) return answer(400, body.error, body.close ? { connection: 'close' } : undefined);
  const checked = checkRequest(rt, docflowType, body.value, session);
  if ('refusal' in checked) return answer(checked.refusal.status, checked.refusal.body);
  const { spec, object } = checked;

  const rawRequestId = (body.value as { requestId?: unknown }).requestId;
  const requestId = typeof rawRequestId === 'string' ? rawRequestId : undefined;
  const earlier = rt.state.noteRepeat(requestId);
  if (earlier !== undefined && rt.config.requestIds === 'dedupe') return answer(earlier.status, creationViewOf(earlier));

  const now = performance.now();
  // The lives of docflows due before this one come first, in the feed as in time.
  rt.state.advance(now);
  let userId = rt.userIds.get(session);
  if (userId === undefined) rt.userIds.set(session, (userId = userIdOf(session)));
  const context = { state: rt.state, userId, now };
  const facts = spec.facts(body.value);
  const refused = spec.admit?.(context, facts);
  if (refused !== undefined) return answer(400, validationError([refused]));
  const docflow = createDocflow(rt, spec, body.value, requestId, userId, now);
  docflow.facts = facts;
  if (object !== undefined) docflow.object = object;
  // Before the lost roll: a docflow whose answer is lost is in the feed all the same, and has acted.
  rt.state.add(docflow, now);
  spec.created?.(context, docflow);
  if (rollLost(rt.config.rates, rt.random)) {
    rt.state.countFault('lost');
    rt.state.countDocflowCall('lost');
    drop(req);
    return;
  }
  answer(docflow.status, creationViewOf(docflow));
}

function createDocflow(
  rt: Runtime,
  spec: DocflowTypeSpec,
  body: unknown,
  requestId: string | undefined,
  userId: string,
  now: number,
): StoredDocflow {
  const docflowId = randomUUID();
  const signed = spec.signing === undefined || spec.signing.signed(body);
  // An empty list of refusals: the register never refuses this type at random.
  const rates = spec.refusals?.length === 0 ? { ...rt.config.life, faultRegistry: 0 } : rt.config.life;
  const cadastralNumber = spec.objectOf?.(body)?.cadastralNumber;
  const plan = planDocflow({
    seq: rt.state.created + 1,
    docflowSeed: Math.floor(rt.lifeRandom() * 0x100000000),
    rates,
    body,
    signed,
    ...(spec.signing === undefined || signed ? {} : { signers: spec.signing.signers(body) }),
    ...(spec.refusals === undefined || spec.refusals.length === 0 ? {} : { refusals: spec.refusals }),
    ...(typeof cadastralNumber === 'string' ? { object: cadastralNumber } : {}),
    payable: spec.payable,
    resultIds: spec.resultIds,
  });
  const docflow: StoredDocflow = {
    docflowId,
    type: spec.type,
    userId,
    status: signed ? 200 : 201,
    createdAt: dateOf(now),
    plan,
    newsLagMs: rt.config.newsLagMs,
    state: signed ? 'queued' : 'suspended',
    paid: false,
  };
  if (requestId !== undefined) docflow.requestId = requestId;
  // The gateway's usual first requirement: the participants must sign the application it made.
  if (!signed) {
    docflow.signatureRequirements = docflow.requirements = {
      signature: plan.applications.map(({ signer, file }) => ({
        person: signer.person,
        role: signer.role,
        files: [{ id: file.id, contentLink: rt.state.fileLink(docflowId, file.id), type: file.type }],
      })),
    };
  }
  return docflow;
}

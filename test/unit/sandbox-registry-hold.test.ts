/**
 * The sandbox's registry actions on a docflow in processing, step by step at given times
 * (no HTTP, no clock): a suspension holds it `sent` whenever its next step comes, a
 * resumption starts the count again, a cancellation ends it for good.
 */
import { describe, it, expect } from 'vitest';
import type { StoredDocflow } from '../../src/sandbox/docflow-record.js';
import { planDocflow } from '../../src/sandbox/lifecycle.js';
import { SandboxState } from '../../src/sandbox/state.js';
import { encumbranceRequest } from '../helpers/sandbox-http.js';

const STEP = 100;

function docflow(id: string): StoredDocflow {
  const plan = planDocflow({
    seq: 1,
    docflowSeed: 1,
    rates: { lifecycleMs: STEP, faultRegistry: 0, payment: 0 },
    body: encumbranceRequest(),
    signed: true,
  });
  return {
    docflowId: id,
    type: 'encumbrance_request',
    userId: 'u',
    status: 200,
    createdAt: '',
    plan,
    newsLagMs: 0,
    state: 'queued',
    paid: false,
  };
}

function started(): { state: SandboxState; d: StoredDocflow; changes: string[] } {
  const changes: string[] = [];
  const state = new SandboxState((d, at) => changes.push(`${d.state}@${at}`));
  const d = docflow('d');
  state.add(d, 0);
  state.advance(STEP);
  expect(d.state).toBe('sent');
  return { state, d, changes };
}

describe('a docflow held by the registry', () => {
  it('completes a step after it is sent when nothing acts on it', () => {
    const { state, d } = started();
    state.advance(2 * STEP);
    expect(d.state).toBe('completed');
  });

  it('takes no step while suspended, and completes a full step after the resumption', () => {
    const { state, d, changes } = started();
    state.hold(d, 150, 'action');
    state.advance(1000);
    expect(d.state).toBe('sent');
    state.release(d, 1000);
    state.advance(1000 + STEP - 1);
    expect(d.state).toBe('sent');
    state.advance(1000 + STEP);
    expect(changes).toEqual(['queued@0', `sent@${STEP}`, `completed@${1000 + STEP}`]);
  });

  it('passes over the step a resumption replaced when it was resumed before that step came', () => {
    const { state, d, changes } = started();
    state.hold(d, 150, 'action');
    state.release(d, 160);
    // The step due at 200 is passed over: the count started again at 160.
    state.advance(200 + STEP / 2);
    expect(d.state).toBe('sent');
    state.advance(160 + STEP);
    expect(changes.at(-1)).toBe(`completed@${160 + STEP}`);
  });

  it('ends a cancelled docflow in error at once and never completes it', () => {
    const { state, d, changes } = started();
    state.hold(d, 120, 'suspend');
    state.cancel(d, 130, { code: 'cancelled', message: 'cancelled' });
    state.advance(5000);
    expect(d.state).toBe('error');
    expect(d).not.toHaveProperty('hold');
    expect(changes).toEqual(['queued@0', `sent@${STEP}`, 'error@130']);
  });
});

/**
 * The sandbox's count of the calls a rate limit counts, by each call's own arrival time
 * (`onCall`): what the bench's rate figure reads, where a timer reading `stats()` put a late
 * read's calls into the wrong second on a loaded host.
 */
import { describe, expect } from 'vitest';
import { API_PREFIX, NEWS_PATH, SUGGEST_PATH } from '../../../src/domain/gateway.js';
import { harness } from '../../helpers/harness.js';

const times: number[] = [];
const it = harness({ sandbox: { sessions: ['s'], onCall: (at) => times.push(at) } });

describe("the sandbox's call times", () => {
  it('gives the arrival time of every suggest and creation call, answered or refused, and of nothing else', async ({ sandbox }) => {
    const post = (path: string, body: unknown, session = 's') =>
      fetch(`${sandbox.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `auth.sid ${session}` },
        body: JSON.stringify(body),
      }).then((r) => r.status);
    const before = Date.now();
    expect(await post(SUGGEST_PATH, { query: 'Москва' })).not.toBe(404);
    // A creation call the sandbox refuses (no session; an unknown type) still arrived: a rate limit counts it.
    expect(await post(`${API_PREFIX}/docflows/encumbrance_request`, {}, 'nobody')).toBe(401);
    expect(await post(`${API_PREFIX}/docflows/no_such_type`, {})).toBe(400);
    // Neither the news feed nor a docflow's read is a call the rate limit counts.
    await fetch(`${sandbox.url}${NEWS_PATH}`, { headers: { authorization: 'auth.sid s' } });
    const after = Date.now();
    expect(times).toHaveLength(3);
    for (const at of times) expect(at >= before && at <= after).toBe(true);
    const stats = sandbox.stats();
    expect(stats.suggestCalls + Object.values(stats.docflowCalls).reduce((a, b) => a + b, 0)).toBe(3);
  });
});

/**
 * A follower started alone goes first (src/feed/follower-lock.ts): `realty-batch track`, run as
 * an operator runs it beside the workers, takes the news feed from a worker's own follower that
 * held it, a worker's follower started while it runs never takes it, and once it stops a worker's
 * follower takes the feed back. Against the shared Redis, a database of the test's own and the
 * real sandbox; the worker's followers in this process, `track` the built command in a child.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect } from 'vitest';
import { startFeedFollower, type FeedFollower } from '../../../src/feed/follower.js';
import { readFeedState } from '../../../src/feed/feed-store.js';
import { createLogger } from '../../../src/logger.js';
import { createRealtyClient, type RealtyClient } from '../../../src/realty/client.js';
import { childEnv, CLI, ROOT } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { DOCFLOW_PATH, encumbranceRequest, post, SESSION } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

// The sandbox's default session is the one the helpers' docflows are made with, and the one `track` is given.
const it = harness({ sandbox: { registry: [], sessions: [SESSION] }, label: 'dedicated' });
const quiet = createLogger({ level: 'silent' });
const POLL = { timeoutMs: 20_000, intervalMs: 20 };

describe('a follower started alone (track)', () => {
  const followers: FeedFollower[] = [];
  const clients: RealtyClient[] = [];
  let tracker: ChildProcess | undefined;
  afterEach(async () => {
    tracker?.kill('SIGKILL');
    tracker = undefined;
    for (const f of followers.splice(0)) await f.close();
    for (const c of clients.splice(0)) await c.close();
  });

  it('takes the feed from a worker’s own follower, which never takes it while track runs, and gives it back when it stops', async ({
    redis,
    keys,
    db: store,
    sandbox,
    env,
  }) => {
    const client = createRealtyClient({ baseUrl: sandbox.url, sessionId: env.REALTY_SESSION_ID!, timeoutMs: 5000 });
    clients.push(client);
    const workerFollower = () => {
      const f = startFeedFollower({ redis, keys, db: store.db, client, logger: quiet, pollMs: 50, lockMs: 1000 });
      followers.push(f);
      return f;
    };
    const first = workerFollower();
    await waitFor(() => first.following, { ...POLL, what: "the worker's follower to follow" });

    tracker = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], { cwd: ROOT, env: childEnv(env), stdio: 'ignore' });
    await waitFor(async () => !first.following && (await redis.exists(keys.feedDedicated)) === 1, {
      ...POLL,
      what: "the worker's follower to leave the feed to track",
    });
    // Whatever is made now is followed by track alone: the items reach the database.
    sandbox.configure({ lifecycleMs: 100 });
    const before = (await readFeedState(store.db)).items;
    for (let i = 0; i < 3; i++) await post(sandbox, DOCFLOW_PATH, encumbranceRequest({ requestId: `erp-dedicated-${i}` }));
    await waitFor(async () => (await readFeedState(store.db)).items >= before + 3, { ...POLL, what: 'track to store the new items' });
    const second = workerFollower();
    // Both worker followers have had several tries at the lock (every half lock period) by the time track stored them.
    await waitFor(async () => (await redis.pttl(keys.feedLock)) > 0, { ...POLL, what: "track's lock" });
    expect([first.following, second.following]).toEqual([false, false]);

    tracker.kill('SIGTERM');
    await new Promise((resolve) => tracker!.once('exit', resolve));
    tracker = undefined;
    // Its key runs out within its lock period (5 s); then a worker's follower follows again.
    await waitFor(() => first.following || second.following, { ...POLL, what: "a worker's follower to take the feed back" });
    expect(first.following && second.following).toBe(false);
  });
});

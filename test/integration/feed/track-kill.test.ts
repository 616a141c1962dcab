/**
 * The fleet's one follower of the news feed, as operations run it (`realty-batch track`
 * processes, real Redis for the lock, one database for the fleet's ledger and feed, the
 * sandbox's docflows living their lives): of two followers one works; killed with SIGKILL in
 * the middle of the feed, the other takes over, and every docflow still ends in the state the
 * gateway gives it, each change stored once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { readFeedState } from '../../../src/feed/feed-store.js';
import { readDocflowStatuses } from '../../../src/ledger/docflows.js';
import { parseRequestId } from '../../../src/ledger/entry.js';
import { childEnv, CLI, ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { AUTH, SESSION } from '../../helpers/sandbox-http.js';
import { waitFor } from '../../helpers/wait-for.js';

interface Tracker {
  child: ChildProcess;
  /** Its log so far (JSON lines: not a terminal). */
  log: () => string;
}

// One database for the whole scenario: the two followers and the run share its ledger and feed.
const it = harness({ per: 'file', label: 'track-kill', sandbox: { sessions: [SESSION], lifecycleMs: 300, faultRegistry: 0.3, seed: 11 } });

describe('track: one follower for the fleet, killed mid-feed', () => {
  let env: Record<string, string>;
  const trackers: Tracker[] = [];
  const poll = (what: string) => ({ timeoutMs: 60_000, intervalMs: 100, what });
  const FOLLOWING = 'following the gateway news feed for the fleet';

  const track = (): Tracker => {
    const child = spawn(process.execPath, [CLI, 'track', '--poll-ms', '50'], {
      cwd: ROOT,
      env: childEnv({ ...env, LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const tracker = { child, log: () => text };
    trackers.push(tracker);
    return tracker;
  };

  it.beforeAll(({ env: harnessEnv }) => {
    env = harnessEnv;
  });
  // Before the harness closes the sandbox and deletes the prefix.
  afterAll(() => {
    for (const t of trackers) t.child.kill('SIGKILL');
  });

  it('of two followers one follows; SIGKILLed mid-feed, the other goes on, and nothing is missed or stored twice', async ({
    dir,
    sandbox,
    db: store,
  }) => {
    const a = track();
    const b = track();
    const holder = await waitFor(() => [a, b].find((t) => t.log().includes(FOLLOWING)), poll('one of them to follow'));
    const other = holder === a ? b : a;
    // The run's own processes follow no feed: the two `track` processes are the fleet's followers.
    const run = runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'k',
        '--no-track',
        '--out',
        join(dir, 'r.csv'),
        '--rejects',
        join(dir, 'x.csv'),
      ],
      env,
      120_000,
    );
    await waitFor(async () => (await readFeedState(store.db)).followed >= 10, poll('the first changes to be followed'));
    expect(other.log()).not.toContain(FOLLOWING);
    holder.child.kill('SIGKILL');
    const killedAt = (await readFeedState(store.db)).followed;
    expect((await run).code).toBe(3);
    // The other takes the lock once the dead one's runs out (5 s), from the cursor the dead one left.
    await waitFor(() => other.log().includes(FOLLOWING), poll('the second to take over'));

    // Every docflow's life ends (completed or error), and the database holds the state the gateway gives.
    const docflows = async () =>
      (await (await fetch(`${sandbox.url}/__sandbox/docflows`)).json()) as Array<{ docflowId: string; requestId: string; state: string }>;
    await waitFor(
      async () => (await docflows()).every((d) => d.state === 'completed' || d.state === 'error' || d.state === 'suspended'),
      poll('the lives to end'),
    );
    const gateway = await docflows();
    await waitFor(async () => {
      const stored = await readDocflowStatuses(
        store.db,
        gateway.map((d) => ({ ...parseRequestId(d.requestId)!, docflowId: d.docflowId })),
      );
      return stored.every((s, i) => s?.state === gateway[i]!.state);
    }, poll('every state stored'));

    // Each change once: the follower stored exactly as many items as the feed holds, all ours.
    const feed = (await (await fetch(`${sandbox.url}/realty/v1/news?after=0&limit=1000`, { headers: AUTH })).json()) as { news: unknown[] };
    const state = await readFeedState(store.db);
    expect(state.followed).toBe(feed.news.length);
    expect(state.unknown).toBe(0);
    expect(state.followed).toBeGreaterThan(killedAt);
    expect(gateway.some((d) => d.state === 'error')).toBe(true);
  }, 180_000);
});

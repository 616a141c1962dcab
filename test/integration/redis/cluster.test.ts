import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { Cluster } from 'ioredis';
import { describe, expect, afterAll } from 'vitest';
import type { RunningSandbox } from '../../../src/sandbox/index.js';
// @ts-expect-error: a plain .mjs module shared with the demo, without types
import { compareWithExpected, readExpectedOutcomes } from '../../../scripts/sample-expectations.mjs';
import { ROOT, runCli } from '../../helpers/cli.js';
import { harness } from '../../helpers/harness.js';
import { freePort } from '../../helpers/ports.js';
import { waitFor } from '../../helpers/wait-for.js';

const run = promisify(execFile);

// The file's folder (the nodes' files) and sandbox; the cluster is its own, no database of its own.
const it = harness({ per: 'file', label: 'cluster', engine: 'none', sandbox: { egronRegions: ['Республика Крым'] } });

describe('a local three-node Redis Cluster', () => {
  let dir: string;
  let sandbox: RunningSandbox;
  const nodes: ChildProcess[] = [];
  const ports: number[] = [];

  it.beforeAll(async ({ dir: folder, sandbox: started }) => {
    dir = folder;
    sandbox = started;
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      ports.push(port);
      nodes.push(
        spawn(
          'redis-server',
          [
            '--port',
            String(port),
            '--bind',
            '127.0.0.1',
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
            '--save',
            '',
            '--appendonly',
            'no',
            '--dir',
            dir,
          ],
          {
            stdio: 'ignore',
          },
        ),
      );
    }
    // 50 tries for each node, then 100 for the cluster, 100 ms apart.
    for (const port of ports) {
      const pong = async () =>
        (await run('redis-cli', ['-p', String(port), 'ping']).catch(() => ({ stdout: '' }))).stdout.trim() === 'PONG';
      await waitFor(pong, { timeoutMs: 5_000, intervalMs: 100, what: `redis-server on port ${port} to answer PING` });
    }
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    const clusterOk = async () => (await run('redis-cli', ['-p', String(ports[0]), 'cluster', 'info'])).stdout.includes('cluster_state:ok');
    await waitFor(clusterOk, { timeoutMs: 10_000, intervalMs: 100, what: 'cluster_state:ok' });
  }, 60_000);
  // Before the harness removes the folder the nodes keep their files in.
  afterAll(() => {
    for (const n of nodes) n.kill('SIGKILL');
  });

  it('runs the samples through it, with every key of ours and of BullMQ in one slot', async () => {
    const env = {
      REDIS_CLUSTER_NODES: ports.map((p) => `127.0.0.1:${p}`).join(','),
      REALTY_API_URL: sandbox.url,
      REALTY_SESSION_ID: 'demo-session',
      REALTY_PREFIX: 'realty',
      LOG_LEVEL: 'error',
    };
    const out = join(dir, 'results.csv');
    const result = await runCli(
      [
        'run',
        'samples/deals.csv',
        '--profile',
        'samples/bank-profile.json',
        '--batch',
        'clustered',
        '--out',
        out,
        '--rejects',
        join(dir, 'r.csv'),
        '--attempts',
        '2',
        '--backoff-ms',
        '50',
      ],
      env,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(3);
    const rows = parse(readFileSync(out), { columns: true }) as Array<Record<string, string>>;
    expect(compareWithExpected(readExpectedOutcomes(join(ROOT, 'samples/README.md')), rows)).toEqual([]);

    const status = await runCli(['status', 'clustered', '--json'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ batch: 'clustered', total: 24, done: true });
    const again = await runCli(['results', 'clustered', '--out', join(dir, 'again.csv')], env);
    expect(again.code).toBe(3);

    // Every key the run wrote hashes to the slot of `{realty}`, so no multi-key command crossed slots.
    const cluster = new Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
    try {
      await cluster.ping();
      const slots = new Set<number>();
      let keys = 0;
      for (const node of cluster.nodes('master')) {
        let cursor = '0';
        do {
          const [next, found] = await node.scan(cursor, 'COUNT', 1000);
          cursor = next;
          for (const key of found) {
            keys++;
            slots.add(Number(await node.cluster('KEYSLOT', key)));
          }
        } while (cursor !== '0');
      }
      expect(keys).toBeGreaterThan(20);
      expect([...slots]).toEqual([Number(await cluster.cluster('KEYSLOT', '{realty}'))]);
    } finally {
      cluster.disconnect();
    }
  });
});

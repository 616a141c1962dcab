/** The parent's side of bench/sandbox-child.ts: start it, ask it, stop it. */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { SandboxConfigPatch, SandboxStats } from '../src/sandbox/index.js';
import type { ChildReply, ChildRequest } from './sandbox-child.js';

export interface SandboxProcess {
  url: string;
  sessionId: string;
  stats(): Promise<SandboxStats>;
  setLatency(ms: number): Promise<void>;
  /** Any run-time setting of `POST /__sandbox/config` (lifecycle, news lag, faults). */
  configure(patch: SandboxConfigPatch): Promise<void>;
  /** Starts counting requests per wall-clock second (forgetting earlier counts). */
  track(): Promise<void>;
  /** Stops counting: [unix second, requests] for every second seen. */
  seconds(): Promise<Array<[number, number]>>;
  stop(): Promise<void>;
}

export async function startSandboxProcess(latencyMs = 0): Promise<SandboxProcess> {
  const child: ChildProcess = fork(join(import.meta.dirname, 'sandbox-child.js'), [], {
    env: { ...process.env, BENCH_LATENCY_MS: String(latencyMs) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T extends ChildReply['type']>(type: T): Promise<Extract<ChildReply, { type: T }>> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: ChildReply): void => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m as Extract<ChildReply, { type: T }>);
      };
      const onExit = (code: number | null): void => reject(new Error(`the sandbox process exited (${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ask = <T extends ChildReply['type']>(request: ChildRequest, type: T): Promise<Extract<ChildReply, { type: T }>> => {
    const reply = next(type);
    child.send(request);
    return reply;
  };
  const { url } = await next('ready');
  return {
    url,
    sessionId: 'demo-session',
    stats: async () => (await ask({ type: 'stats' }, 'stats')).stats,
    setLatency: async (ms) => void (await ask({ type: 'latency', ms }, 'ok')),
    configure: async (patch) => void (await ask({ type: 'configure', patch }, 'ok')),
    track: async () => void (await ask({ type: 'track' }, 'ok')),
    seconds: async () => (await ask({ type: 'seconds' }, 'seconds')).seconds,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.disconnect();
      await exited;
    },
  };
}

/**
 * The gateway sandbox in a process of its own (`fork`ed by bench/sandbox.ts), so
 * the HTTP server's CPU is not the measured worker's. On request it counts the
 * gateway requests (suggest calls + docflow calls) per wall-clock second, each in the
 * second it arrived (the sandbox's `onCall`). It used to read the stats every 10 ms: on
 * a loaded host the timer ran hundreds of ms late, and a late read put the calls of the
 * second before into the next one (249 in the busiest second for `--rate 200`).
 */
import { startSandbox, type SandboxConfigPatch, type SandboxStats } from '../src/sandbox/index.js';

export type ChildRequest =
  | { type: 'stats' }
  | { type: 'latency'; ms: number }
  | { type: 'configure'; patch: SandboxConfigPatch }
  | { type: 'track' }
  | { type: 'seconds' };
export type ChildReply =
  | { type: 'ready'; url: string }
  | { type: 'stats'; stats: SandboxStats }
  | { type: 'seconds'; seconds: Array<[number, number]> }
  | { type: 'ok' };

let tracking = false;
const perSecond = new Map<number, number>();
const counted = (at: number): void => {
  if (!tracking) return;
  const second = Math.floor(at / 1000);
  perSecond.set(second, (perSecond.get(second) ?? 0) + 1);
};

const sandbox = await startSandbox({ latencyMs: Number(process.env.BENCH_LATENCY_MS ?? 0), onCall: counted });
const send = (reply: ChildReply): void => void process.send?.(reply);

process.on('message', (m: ChildRequest) => {
  if (m.type === 'stats') send({ type: 'stats', stats: sandbox.stats() });
  else if (m.type === 'latency') {
    sandbox.configure({ latencyMs: m.ms });
    send({ type: 'ok' });
  } else if (m.type === 'configure') {
    sandbox.configure(m.patch);
    send({ type: 'ok' });
  } else if (m.type === 'track') {
    perSecond.clear();
    tracking = true;
    send({ type: 'ok' });
  } else if (m.type === 'seconds') {
    tracking = false;
    send({ type: 'seconds', seconds: [...perSecond.entries()] });
  }
});
process.on('disconnect', () => void sandbox.close().then(() => process.exit(0)));
send({ type: 'ready', url: sandbox.url });

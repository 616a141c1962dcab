// PING over a raw socket: whether Redis answers, with no dependency installed yet.
import { createConnection } from 'node:net';

/** True when the Redis at `url` (redis://[:password@]host:port) answers PONG within a second. */
export function redisAnswers(url) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: u.hostname, port: Number(u.port || 6379) });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(u.password ? `AUTH ${decodeURIComponent(u.password)}\r\nPING\r\n` : 'PING\r\n'));
    socket.on('data', (d) => done(d.toString().includes('PONG')));
  });
}

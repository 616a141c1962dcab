import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, it, expect } from 'vitest';
import { ROOT, runCli } from '../../helpers/cli.js';

interface Service {
  build?: string | { context: string; dockerfile?: string };
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, unknown>;
}
const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

describe('the compose stack and the image (no Docker engine here: checked by reading them)', () => {
  it('has redis with AOF, the sandbox, scalable workers, the dashboard and a one-shot run', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['dashboard', 'redis', 'run', 'sandbox', 'worker']);
    expect(compose.services.redis!.command).toEqual(
      expect.arrayContaining(['--appendonly', 'yes', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction']),
    );
    // Scalable: no fixed container name, no host port on the worker.
    expect(compose.services.worker).not.toHaveProperty('container_name');
    expect(compose.services.worker).not.toHaveProperty('ports');
  });

  it.each(Object.entries(compose.services).filter(([, s]) => s.build))(
    'runs a command the CLI has, with files that exist: %s',
    async (_name, service) => {
      const [command, ...args] = service.command!;
      const help = await runCli([command!, '--help'], {});
      expect(help.code).toBe(0);
      for (const flag of args.filter((a) => a.startsWith('--'))) expect(help.stdout).toContain(flag);
      for (const path of args.filter((a) => /^samples\//.test(a))) expect(existsSync(join(ROOT, path))).toBe(true);
      const context = typeof service.build === 'string' ? service.build : service.build!.context;
      expect(existsSync(join(ROOT, context, 'Dockerfile'))).toBe(true);
    },
  );

  it('gives every realty-batch service the Redis url and the gateway', () => {
    for (const name of ['worker', 'dashboard', 'run']) {
      expect(compose.services[name]!.environment).toMatchObject({ REDIS_URL: 'redis://redis:6379', REALTY_API_URL: expect.any(String) });
    }
  });

  it('builds in two stages on node:20-slim, with production dependencies only, as a non-root user', () => {
    const stages = dockerfile.match(/^FROM .+$/gm) ?? [];
    expect(stages).toEqual(['FROM node:20-slim AS build', 'FROM node:20-slim']);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('FROM '));
    expect(runtime).toMatch(/npm ci --omit=dev/);
    expect(runtime).toMatch(/^USER node$/m);
    for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(\S+)/gm)) expect(existsSync(join(ROOT, source!))).toBe(true);
  });
});

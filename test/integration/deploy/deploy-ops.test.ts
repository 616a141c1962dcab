/**
 * What operations teams plug in (deploy/): the Grafana dashboard, the Prometheus rules and
 * scrape config, the systemd units and their environment file. Checked by reading them, against
 * a real /metrics scrape after a sample run, and with promtool and systemd-analyze where this
 * host has them.
 */
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { parse, stringify } from 'yaml';
import { describe, expect, afterAll } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { startDashboard, type RunningDashboard } from '../../../src/dashboard/server.js';
import { createLogger } from '../../../src/logger.js';
import { DOCFLOW_STATES } from '../../../src/domain/outcome.js';
import { runTick } from '../../../src/schedule/run-tick.js';
import { TUNABLES } from '../../../src/config.js';
import { ROOT, runCli } from '../../helpers/cli.js';
import {
  basic,
  batchHarness,
  call,
  CRIMEA,
  EGRON,
  INVALID,
  BY_SUGGEST,
  WITH_NUMBER,
  runDashboardBatch,
  type DashboardBatch,
} from '../../helpers/dashboard-batch.js';
import { harness } from '../../helpers/harness.js';
import { freePort } from '../../helpers/ports.js';
import { matchers, metricNames } from '../../helpers/promql.js';
import { REDIS_URL } from '../../helpers/redis.js';

const DEPLOY = join(ROOT, 'deploy');
const read = (path: string): string => readFileSync(join(DEPLOY, path), 'utf8');

/**
 * Queried by the deploy files but exported by something else: they cannot appear in the tool's
 * own scrape (deploy/README.md says what provides them).
 */
const EXTERNAL: Record<string, string> = {
  redis_memory_used_bytes: 'redis_exporter',
  redis_memory_max_bytes: 'redis_exporter',
  up: "Prometheus's own, per scrape target",
};

/**
 * Queried by the deploy files, marked NOT EXPORTED YET there, and proposed in deploy/README.md:
 * realty-batch does not export them (yet). Once it does, move them out of here and drop the
 * marks in the files. Empty since issue 23 point 4: every name the files query is exported
 * (REQUIRED_NOW below), or external.
 */
const PENDING: string[] = [];

/** Exported since issue 23 point 4 (they were PENDING): the real scrape must carry a sample of each. */
const REQUIRED_NOW = [
  'realty_batch_rows',
  'realty_batch_loaded_timestamp_seconds',
  'realty_batch_last_progress_timestamp_seconds',
  'realty_schedule_last_tick_success',
  'realty_schedule_last_tick_timestamp_seconds',
  'realty_queue_paused',
  // Issue 24: the docflows' states at the registry and the news feed's items.
  'realty_docflows',
  'realty_feed_items_total',
];

/** A labelled counter has no sample before its first event, and the sample run opens no breaker: only its family is declared. */
const DECLARED_ONLY = ['realty_breaker_transitions_total'];

// ---- The files

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const alerts = parse(read('prometheus/alerts.yml')) as { groups: Array<{ name: string; rules: Rule[] }> };
const alertRules = alerts.groups.flatMap((g) => g.rules.map((rule) => ({ group: g.name, ...rule })));
const scrape = parse(read('prometheus/scrape.yml')) as {
  scrape_configs: Array<{ job_name: string; metrics_path?: string; basic_auth?: { username?: string; password_file?: string } }>;
};

interface GrafanaTarget {
  expr?: string;
}
interface GrafanaPanel {
  id: number;
  type: string;
  title: string;
  description?: string;
  datasource?: { type: string; uid: string };
  targets?: GrafanaTarget[];
  panels?: GrafanaPanel[];
}
interface GrafanaVariable {
  name: string;
  type: string;
  definition?: string;
  description?: string;
  query?: string | { query?: string };
}
const grafana = JSON.parse(read('grafana/realty-batch.json')) as {
  __inputs: Array<{ name: string; pluginId: string }>;
  schemaVersion: number;
  uid: string;
  panels: GrafanaPanel[];
  templating: { list: GrafanaVariable[] };
};
/** Every panel, those inside rows included; rows themselves left out. */
const panels: GrafanaPanel[] = grafana.panels.flatMap((p) => (p.type === 'row' ? (p.panels ?? []) : [p]));
const variableQuery = (v: GrafanaVariable): string => (typeof v.query === 'string' ? v.query : (v.query?.query ?? v.definition ?? ''));

/** Where each query comes from, for the failure messages. */
const queries: Array<{ where: string; expr: string }> = [
  ...panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `Grafana panel "${p.title}"`, expr: t.expr ?? '' }))),
  ...grafana.templating.list
    .filter((v) => v.type === 'query')
    .map((v) => ({ where: `Grafana variable $${v.name}`, expr: variableQuery(v) })),
  ...alertRules.map((r) => ({ where: `alert ${r.alert ?? r.record}`, expr: r.expr })),
];
const queried = [...new Set(queries.flatMap((q) => metricNames(q.expr)))].sort();

/** `[Section]` → key → values (a key may repeat), comments and blank lines left out. */
function unitFile(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      sections.set(section[1]!, (current = new Map()));
      continue;
    }
    const eq = line.indexOf('=');
    if (!current || eq < 0) throw new Error(`not a unit file line: ${line}`);
    const key = line.slice(0, eq).trim();
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}
const UNITS = {
  work: 'realty-batch-work.service',
  dashboard: 'realty-batch-dashboard.service',
  track: 'realty-batch-track.service',
} as const;
const units = Object.fromEntries(Object.entries(UNITS).map(([command, file]) => [command, unitFile(read(`systemd/${file}`))])) as Record<
  keyof typeof UNITS,
  ReturnType<typeof unitFile>
>;
const service = (command: keyof typeof UNITS, key: string): string | undefined => units[command].get('Service')?.get(key)?.at(-1);

/** systemd's time spans as used here: `75s`, `10min`, `5` (seconds). */
function seconds(span: string): number {
  const m = /^(\d+)\s*(s|sec|min|m)?$/.exec(span);
  if (!m) throw new Error(`not a time span this test reads: ${span}`);
  return Number(m[1]) * (m[2] === 'min' || m[2] === 'm' ? 60 : 1);
}

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return join(dir, command);
    } catch {
      // not in this one
    }
  }
  return undefined;
}
const PROMTOOL = onPath('promtool');
const SYSTEMD_ANALYZE = onPath('systemd-analyze');
/** Debian's prometheus-redis-exporter; the upstream binary is named redis_exporter. */
const REDIS_EXPORTER = onPath('prometheus-redis-exporter') ?? onPath('redis_exporter');

// ---- The checks

/** The sample run the scrape reads, once for the file. */
const it = batchHarness({ label: 'deploy-ops', sandbox: { egronRegions: [CRIMEA] } });
/** A folder of each test's own for the files a tool checks. */
const tools = harness({ label: 'deploy-tools', engine: 'none' });

describe('metricNames: the metric names a PromQL expression reads', () => {
  it('finds the metrics of a rule, not its functions, keywords, label names, label values or durations', () => {
    expect(
      metricNames(
        'sum by (job) (increase(realty_gateway_calls_total{status="401"}[6h])) > 0 and on (job) sum by (job) (realty_queue_jobs{state=~"waiting|prioritized"}) > 0 unless on (job) up offset 5m == bool 1',
      ),
    ).toEqual(['realty_gateway_calls_total', 'realty_queue_jobs', 'up']);
  });

  it('reads through Grafana variables and a division of bare names, and label_values takes its selector only', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (endpoint, le) (rate(realty_gateway_request_duration_seconds_bucket{job=~"$job"}[$__rate_interval]))) / redis_memory_used_bytes / (redis_memory_max_bytes > 0) or vector(1e-9)',
      ),
    ).toEqual(['realty_gateway_request_duration_seconds_bucket', 'redis_memory_max_bytes', 'redis_memory_used_bytes']);
    expect(metricNames('label_values(realty_batch_rows{job=~"$job",outcome="pending"}, batch)')).toEqual(['realty_batch_rows']);
    expect(metricNames('label_values(job)')).toEqual([]);
  });

  it('matchers: the label matchers right after each metric name', () => {
    expect(matchers('sum(realty_queue_jobs{job=~"$job",state="active"}) / up{job!="x"}')).toEqual([
      { metric: 'realty_queue_jobs', label: 'job', op: '=~', value: '$job' },
      { metric: 'realty_queue_jobs', label: 'state', op: '=', value: 'active' },
      { metric: 'up', label: 'job', op: '!=', value: 'x' },
    ]);
  });
});

describe('every metric the dashboard and the rules query is in a real /metrics scrape after a sample run', () => {
  let night: DashboardBatch;
  let dashboard: RunningDashboard;
  let tickDir: string;
  let text: string;
  /** Metric name → its samples' labels. */
  const samples = new Map<string, Array<Record<string, string>>>();
  /** Families declared by `# TYPE` lines, and the sample names each type allows. */
  const declared = new Set<string>();

  it.beforeAll(async ({ redis, keys, prefix, db, dir, sandbox, profile }) => {
    night = await runDashboardBatch({ redis, keys, prefix, db, dir, sandbox, profile }, [BY_SUGGEST, WITH_NUMBER, INVALID, EGRON]);
    // A schedule's tick (an empty inbox), for realty_schedule_last_tick_*, apart from the batch's files.
    tickDir = join(dir, 'tick');
    await mkdir(tickDir);
    await mkdir(join(tickDir, 'inbox'));
    await runTick(
      {
        name: 'deploy-nightly',
        inbox: join(tickDir, 'inbox'),
        outbox: join(tickDir, 'outbox'),
        profile: join(ROOT, 'samples/bank-profile.json'),
      },
      { redis: night.redis, keys: night.keys, db: night.db, logger: createLogger({ level: 'silent' }) },
    );
    const credentials = { user: 'prometheus', password: 'scrape-password' };
    dashboard = await startDashboard({ redis: night.redis, keys: night.keys, db: night.db, host: '127.0.0.1', port: 0, credentials });
    const answer = await call(`${dashboard.url}/metrics`, { authorization: basic(credentials.user, credentials.password) });
    expect(answer.status).toBe(200);
    text = answer.text;
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\w+)$/.exec(line);
      if (type) {
        const suffixes = type[2] === 'histogram' ? ['_bucket', '_sum', '_count'] : type[2] === 'summary' ? ['', '_sum', '_count'] : [''];
        for (const s of suffixes) declared.add(`${type[1]}${s}`);
      }
      if (!line || line.startsWith('#')) continue;
      const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})? \S+$/.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]));
      samples.set(m[1]!, [...(samples.get(m[1]!) ?? []), labels]);
    }
  });
  afterAll(async () => {
    await dashboard?.close();
  });

  it('the files query realty-batch metrics at all (the extractor found them)', () => {
    expect(queried).toEqual(
      expect.arrayContaining([
        'realty_deals_finished_total',
        'realty_gateway_calls_total',
        'realty_gateway_request_duration_seconds_bucket',
        'realty_queue_jobs',
        'realty_breaker_transitions_total',
        ...REQUIRED_NOW,
      ]),
    );
  });

  it('has a sample of each metric exported since issue 23 point 4, with the labels the files use', () => {
    for (const name of REQUIRED_NOW) expect(samples.has(name), `${name} is not in the scrape`).toBe(true);
    expect(samples.get('realty_batch_rows')).toEqual(expect.arrayContaining([{ batch: night.batch, outcome: 'pending' }]));
    expect(samples.get('realty_batch_loaded_timestamp_seconds')).toEqual([{ batch: night.batch }]);
    expect(samples.get('realty_batch_last_progress_timestamp_seconds')).toEqual([{ batch: night.batch }]);
    expect(samples.get('realty_schedule_last_tick_success')).toEqual([{ schedule: 'deploy-nightly' }]);
    expect(samples.get('realty_queue_paused')).toEqual([{ reason: 'session' }, { reason: 'other' }]);
    // Every state and every kind, 0 included: a panel or a rule never reads a series that is not there yet.
    expect(samples.get('realty_docflows')?.map((l) => l.state)).toEqual(expect.arrayContaining([...DOCFLOW_STATES]));
    expect(samples.get('realty_feed_items_total')?.map((l) => l.kind)).toEqual(['followed', 'resolved', 'unknown', 'conflicts']);
  });

  it('has a sample of every queried metric, but the external ones, the pending ones, and the breaker counter (declared only: no breaker opened)', () => {
    const missing = queried.filter(
      (name) => !(name in EXTERNAL) && !PENDING.includes(name) && !DECLARED_ONLY.includes(name) && !samples.has(name),
    );
    expect(
      missing,
      `queried by the deploy files but not in the scrape: ${missing
        .map(
          (n) =>
            `${n} (${queries
              .filter((q) => metricNames(q.expr).includes(n))
              .map((q) => q.where)
              .join(', ')})`,
        )
        .join('; ')}`,
    ).toEqual([]);
    for (const name of DECLARED_ONLY) expect(declared.has(name), `${name} is not even declared by the scrape`).toBe(true);
  });

  it('lists as external or pending only names the tool does not export, and only names the files query', () => {
    for (const name of [...Object.keys(EXTERNAL), ...PENDING]) {
      expect(
        declared.has(name) || samples.has(name),
        `${name} is now in realty-batch's scrape: move it out of EXTERNAL/PENDING (and drop "NOT EXPORTED YET" from deploy/)`,
      ).toBe(false);
      expect(queried, `${name} is listed but no deploy file queries it`).toContain(name);
    }
  });

  it('puts on each metric only labels its samples carry (job: Prometheus adds it), and names queue states BullMQ reports', () => {
    for (const q of queries) {
      for (const m of matchers(q.expr)) {
        const found = samples.get(m.metric);
        if (!found || m.label === 'job') continue;
        expect(
          found.some((labels) => m.label in labels),
          `${q.where}: ${m.metric} has no label ${m.label}`,
        ).toBe(true);
        if (m.metric === 'realty_queue_jobs' && m.label === 'state') {
          const states = new Set(found.map((l) => l.state));
          for (const state of m.value.split('|')) expect(states, `${q.where}: no queue state ${state}`).toContain(state);
        }
      }
    }
  });
});

describe('the Prometheus rules and scrape config (read)', () => {
  const REQUIRED = [
    'RealtyBatchBreakerOpen',
    'RealtyBatchSessionRefused',
    'RealtyBatchNoProgress',
    'RealtyBatchBatchStalled',
    'RealtyBatchScheduleTickFailed',
    'RealtyBatchRedisMemoryHigh',
    'RealtyBatchDocflowsRefused',
  ];

  it('has the five alerts of issue 23 and the per-batch one of its point 4, each once', () => {
    const names = alertRules.map((r) => r.alert);
    expect(names).toEqual(expect.arrayContaining(REQUIRED));
    expect(new Set(names).size).toBe(names.length);
  });

  it.each(alertRules.map((r) => [r.alert!, r] as const))(
    '%s has a for, a severity, a summary and a description with a command to run',
    (_name, rule) => {
      expect(rule.expr.trim()).not.toBe('');
      expect(rule.for).toMatch(/^\d+[smh]$/);
      expect(['critical', 'warning', 'info']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary?.trim().length ?? 0).toBeGreaterThan(10);
      expect(rule.annotations?.description?.length).toBeGreaterThan(80);
      expect(rule.annotations?.description).toMatch(/`(realty-batch|systemctl|journalctl|redis-cli) [^`]+`/);
    },
  );

  it('keeps the rules over metrics the tool does not export yet in a group of their own that says so (none now: one group)', () => {
    expect(alerts.groups.map((g) => g.name)).toEqual(['realty-batch']);
    expect(read('prometheus/alerts.yml')).not.toMatch(/NOT EXPORTED YET/);
    for (const rule of alertRules) {
      const pending = metricNames(rule.expr).filter((n) => PENDING.includes(n));
      expect(
        rule.group === 'realty-batch-needs-new-metrics',
        `${rule.alert} ${pending.length ? 'reads' : 'does not read'} a metric not exported yet`,
      ).toBe(pending.length > 0);
    }
  });

  it('scrapes /metrics with basic auth, under the job name the rules use', () => {
    const job = scrape.scrape_configs.find((c) => c.job_name === 'realty-batch');
    expect(job?.metrics_path ?? '/metrics').toBe('/metrics');
    expect(job?.basic_auth?.username).toMatch(/^\S+$/);
    expect(job?.basic_auth?.password_file).toMatch(/^\//);
    expect(read('prometheus/alerts.yml')).toContain('up{job="realty-batch"}');
  });
});

describe('the Grafana dashboard (read)', () => {
  it('is an importable dashboard with a Prometheus datasource input', () => {
    expect(grafana.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(grafana.uid).toBe('realty-batch');
    expect(grafana.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    const ids = [...grafana.panels.filter((p) => p.type === 'row'), ...panels].map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(grafana.templating.list.map((v) => v.name)).toEqual(expect.arrayContaining(['job', 'batch']));
  });

  it.each(panels.map((p) => [p.title, p] as const))('panel "%s" has a description, the input datasource and a query', (_title, panel) => {
    expect(panel.description?.length).toBeGreaterThan(40);
    expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
    expect(panel.targets?.length).toBeGreaterThan(0);
    for (const t of panel.targets ?? []) expect(t.expr).toMatch(/realty_|redis_|up\b/);
  });

  it('says so on every panel and variable that reads a metric the tool does not export', () => {
    for (const p of panels) {
      const names = (p.targets ?? []).flatMap((t) => metricNames(t.expr ?? ''));
      if (names.some((n) => PENDING.includes(n))) expect(p.description, p.title).toMatch(/^NOT EXPORTED YET/);
      else expect(p.description, p.title).not.toMatch(/NOT EXPORTED YET/);
      if (names.some((n) => EXTERNAL[n] === 'redis_exporter')) expect(p.description, p.title).toMatch(/redis_exporter/);
    }
    for (const v of grafana.templating.list) {
      if (metricNames(variableQuery(v)).some((n) => PENDING.includes(n))) expect(v.description, v.name).toMatch(/^NOT EXPORTED YET/);
    }
  });

  it('covers what issue 23 asks for: outcomes, calls by status, the latency histogram, queue depth, breaker, rows per second, the oldest unfinished row', () => {
    const all = queries.filter((q) => q.where.startsWith('Grafana')).map((q) => q.expr);
    const uses = (name: string) => all.some((e) => metricNames(e).includes(name));
    for (const name of [
      'realty_deals_finished_total',
      'realty_gateway_calls_total',
      'realty_gateway_request_duration_seconds_bucket',
      'realty_queue_jobs',
      'realty_breaker_transitions_total',
      'realty_batch_rows',
      'realty_batch_loaded_timestamp_seconds',
    ]) {
      expect(uses(name), name).toBe(true);
    }
    expect(panels.find((p) => p.type === 'heatmap')?.targets?.[0]?.expr).toMatch(/_bucket/);
    expect(all.some((e) => /by \(status\)/.test(e))).toBe(true);
  });
});

describe('the systemd units and their environment file (read)', () => {
  it.each(Object.keys(UNITS) as Array<keyof typeof UNITS>)(
    'realty-batch-%s.service restarts on failure, reads the environment file, runs as its own user, hardened',
    (command) => {
      expect(service(command, 'Restart')).toBe('on-failure');
      expect(seconds(service(command, 'RestartSec')!)).toBeGreaterThanOrEqual(1);
      expect(service(command, 'EnvironmentFile')).toBe('/etc/realty-batch/realty-batch.env');
      expect(service(command, 'User')).toBe('realty-batch');
      expect(service(command, 'KillSignal')).toBe('SIGTERM');
      expect(service(command, 'NoNewPrivileges')).toBe('yes');
      expect(service(command, 'ProtectSystem')).toBe('strict');
      expect(service(command, 'PrivateTmp')).toBe('yes');
      // V8's JIT needs writable and executable memory.
      expect(service(command, 'MemoryDenyWriteExecute')).toBeUndefined();
      expect(units[command].get('Install')?.get('WantedBy')).toEqual(['multi-user.target']);
    },
  );

  it.each(Object.keys(UNITS) as Array<keyof typeof UNITS>)(
    'realty-batch-%s.service starts the built CLI with a command and flags it has',
    async (command) => {
      const [node, main, cmd, ...args] = service(command, 'ExecStart')!.split(/\s+/);
      expect(node).toMatch(/^\/\S*node$/);
      // The installed package's bin (package.json) under /opt/realty-batch.
      const bin = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['realty-batch'];
      expect(main).toBe(`/opt/realty-batch/${bin}`);
      expect(cmd).toBe(command);
      const help = await runCli([command, '--help'], {});
      expect(help.code).toBe(0);
      const flags = args.filter((a) => a.startsWith('--'));
      expect(flags.length).toBeGreaterThan(0);
      for (const flag of flags)
        expect(help.stdout, `realty-batch ${command} has no ${flag}`).toMatch(new RegExp(`(^|[\\s,])${flag}([\\s,=]|$)`, 'm'));
    },
  );

  it("gives the worker longer to stop than its grace period, and the schedules' folders to write", () => {
    const args = service('work', 'ExecStart')!.split(/\s+/);
    const grace = args.includes('--grace-ms') ? Number(args[args.indexOf('--grace-ms') + 1]) : TUNABLES.graceMs;
    expect(grace).toBe(TUNABLES.graceMs);
    expect(seconds(service('work', 'TimeoutStopSec')!) * 1000).toBeGreaterThanOrEqual(grace + 15_000);
    expect(service('work', 'ReadWritePaths')).toMatch(/^\/\S+/);
  });

  it('lists every variable the tool reads in the environment file, and none it does not, with the secrets empty', () => {
    const config = readFileSync(join(ROOT, 'src/config.ts'), 'utf8');
    const schema = config.slice(config.indexOf('z.object({'), config.indexOf('});', config.indexOf('z.object({')));
    const fromSchema = [...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    // Besides the schema, what any source file reads of process.env (the dashboard's credentials).
    const sources = ['src', 'jobs'].flatMap((dir) =>
      (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.ts'))
        .map((f) => readFileSync(join(ROOT, dir, f), 'utf8')),
    );
    const fromSources = sources.flatMap((text) => [...text.matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)].map((m) => m[1]!));
    const variables = new Set([...fromSchema, ...fromSources]);
    expect([...variables]).toEqual(
      expect.arrayContaining([
        'REDIS_URL',
        'REALTY_API_URL',
        'REALTY_SESSION_ID',
        'DASHBOARD_USER',
        'DASHBOARD_PASSWORD',
        'DASHBOARD_PUBLIC_URL',
      ]),
    );

    const example = readFileSync(join(DEPLOY, 'systemd/realty-batch.env.example'), 'utf8');
    const lines = [...example.matchAll(/^(#?)([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => ({
      commented: m[1] === '#',
      name: m[2]!,
      value: m[3]!,
    }));
    const named = new Set(lines.map((l) => l.name));
    for (const name of variables) expect(named, `${name} is read by the tool but not in the environment file`).toContain(name);
    for (const name of named) expect(variables, `${name} is in the environment file but the tool does not read it`).toContain(name);
    for (const secret of ['REALTY_SESSION_ID', 'DASHBOARD_PASSWORD', 'REDIS_SENTINEL_PASSWORD']) {
      expect(lines.filter((l) => l.name === secret).map((l) => l.value)).toEqual(['']);
    }

    // As systemd reads it (uncommented lines), with the secrets filled: a configuration the tool accepts.
    const env = Object.fromEntries(lines.filter((l) => !l.commented).map((l) => [l.name, l.value === '' ? 'a-secret' : l.value]));
    const parsed = loadConfig(env);
    expect(parsed.sessionId).toBe('a-secret');
    expect(parsed.apiUrl).toMatch(/^https:\/\//);
  });

  it('the README of deploy/ names every file it ships, what is external, and every metric the tool exports for the files', () => {
    const readme = read('README.md');
    for (const file of [
      'grafana/realty-batch.json',
      'prometheus/alerts.yml',
      'prometheus/scrape.yml',
      `systemd/${UNITS.work}`,
      `systemd/${UNITS.dashboard}`,
      'systemd/realty-batch.env.example',
    ]) {
      expect(existsSync(join(DEPLOY, file)), file).toBe(true);
      expect(readme, file).toContain(file);
    }
    for (const name of [...Object.keys(EXTERNAL).filter((n) => n !== 'up'), ...PENDING, ...REQUIRED_NOW])
      expect(readme, name).toContain(name);
    expect(readme).not.toMatch(/not exported yet|NOT EXPORTED YET/i);
  });
});

describe('the tools operations teams check them with', () => {
  /** Grafana's variables replaced, so that promtool can parse a panel's query. */
  const asPromQL = (expr: string): string =>
    expr
      .replace(/\$__rate_interval|\$__interval/g, '1m')
      .replace(/\$__range/g, '6h')
      .replace(/\$\{?job\}?/g, 'realty-batch')
      .replace(/\$\{?batch\}?/g, '.*');

  tools.runIf(PROMTOOL)(
    "promtool check rules accepts alerts.yml, check config scrape.yml, and every Grafana query parses (runs only where promtool is on the PATH: Debian's prometheus package)",
    async ({ dir }) => {
      const rules = spawnSync(PROMTOOL!, ['check', 'rules', join(DEPLOY, 'prometheus/alerts.yml')], { encoding: 'utf8' });
      expect(rules.status, rules.stdout + rules.stderr).toBe(0);
      expect(rules.stdout).toContain(`SUCCESS: ${alertRules.length} rules found`);
      // The rule file it names is wherever the operator copies alerts.yml: the syntax only.
      const config = spawnSync(PROMTOOL!, ['check', 'config', '--syntax-only', join(DEPLOY, 'prometheus/scrape.yml')], {
        encoding: 'utf8',
      });
      expect(config.status, config.stdout + config.stderr).toBe(0);

      const panelQueries = queries.filter((q) => q.where.startsWith('Grafana panel'));
      const file = join(dir, 'grafana-queries.yml');
      await writeFile(
        file,
        stringify({
          groups: [{ name: 'grafana', rules: panelQueries.map((q, i) => ({ record: `grafana:query:${i}`, expr: asPromQL(q.expr) })) }],
        }),
      );
      const parsed = spawnSync(PROMTOOL!, ['check', 'rules', file], { encoding: 'utf8' });
      expect(parsed.status, parsed.stdout + parsed.stderr).toBe(0);
    },
  );

  tools.runIf(PROMTOOL)(
    'promtool test rules: each alert fires in the situation it describes and stays quiet otherwise (runs only where promtool is on the PATH)',
    async ({ dir }) => {
      // promtool compares annotations too: they are checked by `check rules` above, and left out here.
      const bare = { groups: alerts.groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _a, ...rule }) => rule) })) };
      const job = 'job="realty-batch",instance="dash:3000"';
      const fired = (alertname: string, severity: string, labels: Record<string, string> = {}) => ({
        exp_labels: { alertname, severity, ...labels },
      });
      const tests = [
        {
          // The breaker opens again every 30 s for 20 minutes; another deployment's opened once.
          interval: '30s',
          input_series: [
            { series: `realty_breaker_transitions_total{${job},state="open"}`, values: '0+1x40' },
            { series: `realty_breaker_transitions_total{job="other",instance="o:3000",state="open"}`, values: '0 1x40' },
          ],
          alert_rule_test: [
            { eval_time: '9m', alertname: 'RealtyBatchBreakerOpen', exp_alerts: [] },
            {
              eval_time: '15m',
              alertname: 'RealtyBatchBreakerOpen',
              exp_alerts: [fired('RealtyBatchBreakerOpen', 'warning', { job: 'realty-batch' })],
            },
          ],
        },
        {
          // Paused for a refused session from minute 1; another deployment paused from Bull Board (other).
          interval: '1m',
          input_series: [
            { series: `realty_queue_paused{${job},reason="session"}`, values: '0 1x30' },
            { series: `realty_queue_paused{${job},reason="other"}`, values: '0x30' },
            { series: `realty_queue_paused{job="other",instance="o:3000",reason="session"}`, values: '0x30' },
            { series: `realty_queue_paused{job="other",instance="o:3000",reason="other"}`, values: '1x30' },
          ],
          alert_rule_test: [
            { eval_time: '4m', alertname: 'RealtyBatchSessionRefused', exp_alerts: [] },
            {
              eval_time: '10m',
              alertname: 'RealtyBatchSessionRefused',
              exp_alerts: [fired('RealtyBatchSessionRefused', 'critical', { job: 'realty-batch' })],
            },
          ],
        },
        {
          // Deals wait and nothing finishes from minute 10 on; another deployment keeps finishing rows.
          interval: '1m',
          input_series: [
            { series: `realty_queue_jobs{${job},state="waiting"}`, values: '50x60' },
            { series: `realty_deals_finished_total{${job},outcome="queued"}`, values: '0+5x10 50x50' },
            { series: `realty_queue_jobs{job="other",instance="o:3000",state="active"}`, values: '20x60' },
            { series: `realty_deals_finished_total{job="other",instance="o:3000",outcome="queued"}`, values: '0+5x60' },
          ],
          alert_rule_test: [
            { eval_time: '30m', alertname: 'RealtyBatchNoProgress', exp_alerts: [] },
            {
              eval_time: '45m',
              alertname: 'RealtyBatchNoProgress',
              exp_alerts: [fired('RealtyBatchNoProgress', 'warning', { job: 'realty-batch' })],
            },
          ],
        },
        {
          // 85 % of maxmemory; another Redis at 95 % of no limit (maxmemory 0).
          interval: '1m',
          input_series: [
            { series: 'redis_memory_used_bytes{job="redis",instance="r:9121"}', values: '850x10' },
            { series: 'redis_memory_max_bytes{job="redis",instance="r:9121"}', values: '1000x10' },
            { series: 'redis_memory_used_bytes{job="redis",instance="u:9121"}', values: '950x10' },
            { series: 'redis_memory_max_bytes{job="redis",instance="u:9121"}', values: '0x10' },
          ],
          alert_rule_test: [
            {
              eval_time: '8m',
              alertname: 'RealtyBatchRedisMemoryHigh',
              exp_alerts: [fired('RealtyBatchRedisMemoryHigh', 'warning', { job: 'redis', instance: 'r:9121' })],
            },
          ],
        },
        {
          // Schedule nsk-nightly's tick fails at minute 2 and goes well again at minute 10; msk-nightly never fails.
          interval: '1m',
          input_series: [
            { series: `realty_schedule_last_tick_success{${job},schedule="nsk-nightly"}`, values: '1 1 0x7 1x10' },
            { series: `realty_schedule_last_tick_success{${job},schedule="msk-nightly"}`, values: '1x20' },
          ],
          alert_rule_test: [
            { eval_time: '2m', alertname: 'RealtyBatchScheduleTickFailed', exp_alerts: [] },
            {
              eval_time: '5m',
              alertname: 'RealtyBatchScheduleTickFailed',
              exp_alerts: [
                fired('RealtyBatchScheduleTickFailed', 'warning', { job: 'realty-batch', instance: 'dash:3000', schedule: 'nsk-nightly' }),
              ],
            },
            { eval_time: '12m', alertname: 'RealtyBatchScheduleTickFailed', exp_alerts: [] },
          ],
        },
        {
          // Batch a: pending rows, its last progress at 0 (the Unix epoch, as promtool's clock starts), so stalled from minute 30.
          // Batch b: pending rows, progressing every minute. Batch c: finished long ago, nothing pending.
          interval: '1m',
          input_series: [
            { series: `realty_batch_rows{${job},batch="a",outcome="pending"}`, values: '10x60' },
            { series: `realty_batch_last_progress_timestamp_seconds{${job},batch="a"}`, values: '0x60' },
            { series: `realty_batch_rows{${job},batch="b",outcome="pending"}`, values: '50-1x40' },
            { series: `realty_batch_last_progress_timestamp_seconds{${job},batch="b"}`, values: '0+60x60' },
            { series: `realty_batch_rows{${job},batch="c",outcome="pending"}`, values: '0x60' },
            { series: `realty_batch_last_progress_timestamp_seconds{${job},batch="c"}`, values: '0x60' },
          ],
          alert_rule_test: [
            { eval_time: '30m', alertname: 'RealtyBatchBatchStalled', exp_alerts: [] },
            {
              eval_time: '40m',
              alertname: 'RealtyBatchBatchStalled',
              exp_alerts: [fired('RealtyBatchBatchStalled', 'warning', { job: 'realty-batch', batch: 'a' })],
            },
          ],
        },
        {
          // Two docflows refused at minute 10, none since; another deployment's error count stays put.
          interval: '1m',
          input_series: [
            { series: `realty_docflows{${job},state="error"}`, values: '3x9 5x120' },
            { series: `realty_docflows{${job},state="completed"}`, values: '0+2x130' },
            { series: `realty_docflows{job="other",instance="o:3000",state="error"}`, values: '7x130' },
          ],
          alert_rule_test: [
            { eval_time: '8m', alertname: 'RealtyBatchDocflowsRefused', exp_alerts: [] },
            {
              eval_time: '20m',
              alertname: 'RealtyBatchDocflowsRefused',
              exp_alerts: [fired('RealtyBatchDocflowsRefused', 'warning', { job: 'realty-batch' })],
            },
            { eval_time: '90m', alertname: 'RealtyBatchDocflowsRefused', exp_alerts: [] },
          ],
        },
        {
          interval: '1m',
          input_series: [
            { series: `realty_schedule_last_tick_success{${job},schedule="nsk-nightly"}`, values: '1 0x10' },
            { series: `realty_schedule_last_tick_success{${job},schedule="msk-nightly"}`, values: '1x10' },
            { series: `up{${job}}`, values: '1 1 0x10' },
          ],
          alert_rule_test: [
            {
              eval_time: '5m',
              alertname: 'RealtyBatchScheduleTickFailed',
              exp_alerts: [
                fired('RealtyBatchScheduleTickFailed', 'warning', { job: 'realty-batch', instance: 'dash:3000', schedule: 'nsk-nightly' }),
              ],
            },
            { eval_time: '4m', alertname: 'RealtyBatchMetricsDown', exp_alerts: [] },
            {
              eval_time: '8m',
              alertname: 'RealtyBatchMetricsDown',
              exp_alerts: [fired('RealtyBatchMetricsDown', 'critical', { job: 'realty-batch', instance: 'dash:3000' })],
            },
          ],
        },
      ];
      await writeFile(join(dir, 'alerts.yml'), stringify(bare));
      await writeFile(join(dir, 'alerts.test.yml'), stringify({ rule_files: ['alerts.yml'], evaluation_interval: '30s', tests }));
      const run = spawnSync(PROMTOOL!, ['test', 'rules', join(dir, 'alerts.test.yml')], { encoding: 'utf8', cwd: dir });
      expect(run.status, run.stdout + run.stderr).toBe(0);
    },
  );

  tools.runIf(REDIS_EXPORTER)(
    "redis_exporter exports the Redis names the files query, for the test Redis (runs only where redis_exporter is on the PATH: Debian's prometheus-redis-exporter)",
    async () => {
      const port = await freePort();
      const exporter = spawn(REDIS_EXPORTER!, ['-redis.addr', REDIS_URL, '-web.listen-address', `127.0.0.1:${port}`], { stdio: 'ignore' });
      try {
        let text = '';
        for (let i = 0; i < 50 && !text; i++) {
          text = await fetch(`http://127.0.0.1:${port}/metrics`).then(
            (r) => r.text(),
            () => '',
          );
          if (!text) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const names = new Set([...text.matchAll(/^([A-Za-z_:][\w:]*)(?:\{|\s)/gm)].map((m) => m[1]!));
        for (const name of Object.keys(EXTERNAL).filter((n) => EXTERNAL[n] === 'redis_exporter')) expect(names, name).toContain(name);
        // Connected to Redis, not only up: redis_up 1.
        expect(text).toMatch(/^redis_up 1$/m);
      } finally {
        exporter.kill();
      }
    },
  );

  tools.runIf(SYSTEMD_ANALYZE)(
    'systemd-analyze verify accepts the units (runs only where systemd-analyze is on the PATH)',
    async ({ dir }) => {
      const files: string[] = [];
      for (const file of Object.values(UNITS)) {
        // verify checks that ExecStart's program exists: node where this host has it, if not at the unit's path.
        let text = read(`systemd/${file}`);
        const node = /^ExecStart=(\S+)/m.exec(text)![1]!;
        if (!existsSync(node)) text = text.replace(`ExecStart=${node} `, `ExecStart=${process.execPath} `);
        await writeFile(join(dir, file), text);
        files.push(join(dir, file));
      }
      const run = spawnSync(SYSTEMD_ANALYZE!, ['verify', ...files], { encoding: 'utf8' });
      const ours = `${run.stdout}${run.stderr}`.split('\n').filter((l) => Object.values(UNITS).some((f) => l.includes(f)));
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(ours, 'warnings about the units').toEqual([]);
    },
  );
});

/**
 * For the deploy checks: the metric names a PromQL expression (or a Grafana variable's
 * `label_values(...)`) reads, and the label matchers it puts on them. Not a parser: it removes
 * what cannot be a metric name (strings, Grafana's `$variables`, label matchers, ranges, the
 * label lists of `by`/`without`/`on`/`ignoring`/`group_left`/`group_right`), then takes every
 * identifier that is not a function (followed by `(`), a keyword, or part of a number or a
 * duration. test/integration/deploy/deploy-ops.test.ts checks it on sample expressions.
 */

const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/** Grafana's variables: `$name`, `${name}`, `${name:format}`, `[[name]]`. */
const GRAFANA_VARIABLE = /\$\{[^}]*\}|\$\w+|\[\[[^\]]*\]\]/g;
const STRING = /"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g;

export function metricNames(expr: string): string[] {
  const labelValues = /^\s*label_values\s*\((.*)\)\s*$/s.exec(expr);
  // label_values(<selector>, <label>) or label_values(<label>): only the selector names a metric.
  if (labelValues) {
    const args = labelValues[1]!.replace(STRING, '""');
    const comma = args.lastIndexOf(',');
    return comma < 0 ? [] : metricNames(args.slice(0, comma));
  }
  const stripped = expr
    .replace(STRING, '""')
    .replace(GRAFANA_VARIABLE, ' ')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  // Not after a letter, digit, colon or dot: the `m` of `5m`, the `e` of `1e-9` are no names.
  for (const m of stripped.matchAll(/(?<![\w:.])([A-Za-z_:][\w:]*)(?!\s*\()/g)) {
    const name = m[1]!;
    // A name the lookahead cut short (`sum` of `sum (`) is a function: the full identifier must end here.
    const after = stripped.slice(m.index + name.length);
    if (/^[\w:]/.test(after) || /^\s*\(/.test(after)) continue;
    if (KEYWORDS.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names].sort();
}

export interface Matcher {
  metric: string;
  label: string;
  op: '=' | '!=' | '=~' | '!~';
  value: string;
}

/** The label matchers written right after a metric name: `name{label="value", ...}`. */
export function matchers(expr: string): Matcher[] {
  const found: Matcher[] = [];
  for (const selector of expr.matchAll(/(?<![\w:.$])([A-Za-z_:][\w:]*)\s*\{([^}]*)\}/g)) {
    for (const m of selector[2]!.matchAll(/([A-Za-z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      found.push({ metric: selector[1]!, label: m[1]!, op: m[2] as Matcher['op'], value: m[3]! });
    }
  }
  return found;
}

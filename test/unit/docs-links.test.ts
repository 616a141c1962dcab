/**
 * The manual's links hold: every relative link of README.md, docs/*.md, deploy/README.md,
 * bench/README.md, samples/README.md and CHANGELOG.md names a file or folder that exists, and a
 * `#anchor` into a markdown file names one of its headings by GitHub's slug rule. README stays
 * short enough for a newcomer's ten minutes; the rest of the manual is in docs/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** The markdown files whose links are checked, as paths from the repository's root. */
const CHECKED = [
  'README.md',
  'CHANGELOG.md',
  'deploy/README.md',
  'bench/README.md',
  'samples/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** A markdown file's lines outside fenced code blocks (a `#` in a shell block is no heading, a link there no link). */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').filter((line) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (open) {
      if (fence === undefined) fence = open[1]![0]!;
      else if (open[1]![0] === fence) fence = undefined;
      return false;
    }
    return fence === undefined;
  });
}

/**
 * GitHub's anchor for a heading (github-slugger): the text as shown (code spans, links and
 * emphasis reduced to their text), lower-cased, with everything but letters, digits, `_`, `-`
 * and spaces dropped, spaces made hyphens; a repeated slug gets `-1`, `-2`, ...
 */
function headingSlugs(text: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const shown = m[1]!
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/`([^`]*)`/g, '$1')
      .replace(/\*\*|__|\*/g, '');
    const base = shown
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base);
    slugs.add(n === undefined ? base : `${base}-${n}`);
    seen.set(base, (n ?? 0) + 1);
  }
  return slugs;
}

/** Every `[text](target)` and `![alt](target)` of a file's prose, outside code spans, that is not a URL. */
function relativeLinks(text: string): string[] {
  const links: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push(target);
    }
  }
  return links;
}

/** What is wrong with each link of `file` (a path from the root): a target that is not there, or an anchor no heading has. */
function brokenLinks(file: string, text: string, read: (path: string) => string | undefined, exists: (path: string) => boolean): string[] {
  const problems: string[] = [];
  for (const link of relativeLinks(text)) {
    const hash = link.indexOf('#');
    const pathPart = hash < 0 ? link : link.slice(0, hash);
    const anchor = hash < 0 ? undefined : decodeURIComponent(link.slice(hash + 1));
    const target = pathPart === '' ? file : normalize(join(dirname(file), decodeURIComponent(pathPart)));
    if (target.startsWith('..')) {
      problems.push(`${file}: ${link} leads out of the repository`);
      continue;
    }
    if (!exists(target)) {
      problems.push(`${file}: ${link} names no file (${target})`);
      continue;
    }
    if (anchor === undefined || !target.endsWith('.md')) continue;
    const targetText = target === file ? text : read(target);
    if (targetText === undefined || !headingSlugs(targetText).has(anchor)) problems.push(`${file}: ${link} names no heading of ${target}`);
  }
  return problems;
}

const onDisk = {
  read: (path: string) => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : undefined),
  exists: (path: string) => existsSync(join(ROOT, path)),
};

describe('the manual', () => {
  it('has every relative link and #anchor of README, docs/, deploy/, bench/, samples/ and CHANGELOG resolve', () => {
    const problems = CHECKED.flatMap((file) => brokenLinks(file, onDisk.read(file) ?? '', onDisk.read, onDisk.exists));
    expect(problems).toEqual([]);
    // The check sees links at all: README links its docs pages.
    expect(relativeLinks(onDisk.read('README.md') ?? '').filter((l) => l.startsWith('docs/')).length).toBeGreaterThan(10);
  });

  it('keeps README.md under 250 lines: a newcomer reads it in ten minutes, the rest is in docs/', () => {
    const lines = (onDisk.read('README.md') ?? '').split('\n').length;
    expect(lines).toBeLessThan(250);
  });

  it('names a missing file, a missing heading and a link out of the repository', () => {
    const files: Record<string, string> = {
      'docs/a.md': '# A page\n\n## The `ledger` (never twice)\n\n## Same\n\n## Same\n',
      'docs/b.md': [
        '[ok](a.md#the-ledger-never-twice) [ok](a.md#same-1) [ok](#b) [ok](../README.md)',
        '[gone](c.md) [no heading](a.md#the-ledger) [out](../../x.md)',
        '```sh',
        '[in a fence](nowhere.md)',
        '```',
        '`[in code](nowhere.md)` [web](https://example.com/x.md)',
        '# B',
      ].join('\n'),
      'README.md': '# R\n',
    };
    const problems = brokenLinks(
      'docs/b.md',
      files['docs/b.md']!,
      (p) => files[p],
      (p) => p in files,
    );
    expect(problems).toEqual([
      'docs/b.md: c.md names no file (docs/c.md)',
      'docs/b.md: a.md#the-ledger names no heading of docs/a.md',
      'docs/b.md: ../../x.md leads out of the repository',
    ]);
  });

  it("makes GitHub's anchors of headings with code, punctuation, Cyrillic and repeats", () => {
    const slugs = headingSlugs(
      [
        '## `/deals`: find a deal across every batch',
        '## When the database is lost: `ledger import`',
        '### `--files-root <dir>`, kept',
        '## Адреса и `REALTY_PREFIX`',
        '## A **bold** word',
        '## Same',
        '## Same',
      ].join('\n'),
    );
    expect([...slugs]).toEqual([
      'deals-find-a-deal-across-every-batch',
      'when-the-database-is-lost-ledger-import',
      '--files-root-dir-kept',
      'адреса-и-realty_prefix',
      'a-bold-word',
      'same',
      'same-1',
    ]);
  });
});

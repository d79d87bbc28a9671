/**
 * The documents are reference for users: every link stays in the repository and resolves (files
 * and heading anchors, by GitHub's slug rules), and no text reads as a work log (dated runs, issue
 * numbers, work sessions, the machines the work ran on).
 *
 *   node --import tsx --test test/docs-are-reference.test.ts
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** README.md, every docs/*.md, and the notes beside the benchmark results. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
  'bench/results/README.md',
].filter((path) => existsSync(join(ROOT, path)));

/** Hosts a link may name: examples of a gateway on this machine. */
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost']);

/** Text that belongs to a work log, not to reference; checked outside code. */
const HISTORY: Array<{ what: string; pattern: RegExp }> = [
  { what: 'a dated entry', pattern: /\b20\d\d-[01]\d-[0-3]\d\b/ },
  { what: 'a time of day', pattern: /\b\d{1,2}:\d\d(?:\s*[-–]\s*\d{1,2}:\d\d)?\s*UTC\b/ },
  { what: 'an issue number', pattern: /\b(?:issues?|bugs?|tickets?|PRs?|pull requests?)\s*#?\d+\b/i },
  { what: 'an issue number', pattern: /(?:^|[\s([])#\d+\b/ },
  {
    what: 'a work session',
    pattern:
      /\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|\d+(?:st|nd|rd|th)|next|previous|earlier|later)\s+sessions?\b/i,
  },
  { what: 'a work session', pattern: /\bsessions?(?:'s|')\s+(?:VMs?|box|runs?|changes|end|last|work|figures|code)\b/i },
  {
    what: 'a work session',
    pattern: /\b(?:after|before|during|since|over)\s+(?:the|this|that|each|every)\s+session\b(?!\s+(?:cookie|token|expires|ends))/i,
  },
  { what: 'a VM', pattern: /\bVMs?\b|\b[Vv]irtual [Mm]achines?\b/ },
  { what: 'the machine of the work', pattern: /\bthis\s+box\b|\b(?:shared|busy|quiet|loaded|development|same)\s+box\b|\bthe box (?:was|is)\b/i },
  { what: 'a boot', pattern: /\b(?:freshly\s+)?booted\b|\bboot\s+times?\b|\b(?:VM|machine)\s+boots?\b/i },
  { what: 'a load average', pattern: /\bload average\b/i },
];

/** Outside the repository whatever the markup: checked in code too. */
const OUTSIDE: Array<{ what: string; pattern: RegExp }> = [
  { what: 'a path outside the repository', pattern: /\.\.\/shared\b/ },
  { what: 'a harness outside the repository', pattern: /\bbench-peers\b/ },
];

interface Line {
  number: number;
  /** The line as written. */
  raw: string;
  /** The line with code (fenced blocks, inline spans) blanked out; '' inside a fenced block. */
  prose: string;
}

function linesOf(text: string): Line[] {
  let fence: string | null = null;
  return text.split('\n').map((raw, index) => {
    const number = index + 1;
    const opening = /^\s{0,3}(`{3,}|~{3,})/.exec(raw);
    if (fence !== null) {
      if (opening && opening[1]![0] === fence[0] && opening[1]!.length >= fence.length && raw.trim() === opening[1]) fence = null;
      return { number, raw, prose: '' };
    }
    if (opening) {
      fence = opening[1]!;
      return { number, raw, prose: '' };
    }
    return { number, raw, prose: withoutInlineCode(raw) };
  });
}

/** Inline code spans (`x`, ``x``) replaced by spaces of the same length. */
function withoutInlineCode(line: string): string {
  return line.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length));
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped (but '-' and '_'), spaces to '-'. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '')
    .replace(/~~/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

const anchorCache = new Map<string, Set<string>>();

/** Every anchor a Markdown file has: its headings' slugs (repeats numbered as GitHub does) and HTML ids. */
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map<string, number>();
  for (const line of linesOf(readFileSync(path, 'utf8'))) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line.prose === '' ? '' : line.raw);
    if (heading) {
      const base = slug(heading[1]!);
      const count = seen.get(base) ?? 0;
      seen.set(base, count + 1);
      anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    for (const match of line.prose.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors.add(match[1]!);
  }
  anchorCache.set(path, anchors);
  return anchors;
}

/** The link targets on a line of prose: inline links and images, reference definitions, autolinks, bare URLs, HTML. */
function targetsOf(prose: string): string[] {
  const targets: string[] = [];
  for (const match of prose.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g)) targets.push(match[1]!);
  const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
  if (definition) targets.push(definition[1]!);
  for (const match of prose.matchAll(/(?:href|src)\s*=\s*"([^"]*)"/g)) targets.push(match[1]!);
  // URLs written out (GitHub links them): those not already inside a link above.
  const outsideLinks = prose.replace(/\]\([^)]*\)/g, ']()').replace(/(?:href|src)\s*=\s*"[^"]*"/g, '');
  for (const match of outsideLinks.matchAll(/\b(?:https?|ftp):\/\/[^\s<>()[\]`'"]+|\bwww\.[^\s<>()[\]`'"]+/gi)) targets.push(match[0]);
  return targets;
}

/** Why a link from `from` to `target` is not allowed, or null. */
function linkProblem(from: string, target: string): string | null {
  if (target === '') return 'an empty link';
  if (/^www\./i.test(target)) return `${target}: a link that leaves the repository`;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(target);
  if (scheme) {
    if (!/^https?$/i.test(scheme[1]!)) return `${target}: a link that leaves the repository`;
    let host: string;
    try {
      host = new URL(target).hostname;
    } catch {
      return `${target}: not a URL`;
    }
    return LOCAL_HOSTS.has(host) ? null : `${target}: a link that leaves the repository`;
  }
  if (target.startsWith('/')) return `${target}: an absolute path (write it relative to ${from})`;
  const hashAt = target.indexOf('#');
  const path = decodeURIComponent(hashAt === -1 ? target : target.slice(0, hashAt));
  const anchor = hashAt === -1 ? null : decodeURIComponent(target.slice(hashAt + 1));
  const resolved = path === '' ? join(ROOT, from) : resolve(dirname(join(ROOT, from)), path);
  const inside = relative(ROOT, resolved);
  if (inside.startsWith('..') || inside.split(sep).includes('..')) return `${target}: outside the repository`;
  if (!existsSync(resolved)) return `${target}: no such file in the repository`;
  if (anchor !== null && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
    return `${target}: no heading with the anchor #${anchor} in ${inside}`;
  }
  return null;
}

function problemsOf(path: string): { links: string[]; history: string[] } {
  const links: string[] = [];
  const history: string[] = [];
  for (const line of linesOf(readFileSync(join(ROOT, path), 'utf8'))) {
    for (const target of targetsOf(line.prose)) {
      const problem = linkProblem(path, target);
      if (problem) links.push(`${path}:${line.number}: ${problem}`);
    }
    for (const { what, pattern } of HISTORY) {
      const match = pattern.exec(line.prose);
      if (match) history.push(`${path}:${line.number}: ${what}: "${match[0].trim()}"`);
    }
    for (const { what, pattern } of OUTSIDE) {
      const match = pattern.exec(line.raw);
      if (match) links.push(`${path}:${line.number}: ${what}: "${match[0]}"`);
    }
  }
  return { links, history };
}

describe('the checker itself', () => {
  test("slugs follow GitHub's rules", () => {
    assert.equal(slug('Scale out: PostgreSQL and Redis'), 'scale-out-postgresql-and-redis');
    assert.equal(slug('Health, readiness and restarts'), 'health-readiness-and-restarts');
    assert.equal(slug('Responses API (Codex)'), 'responses-api-codex');
    assert.equal(slug("Fix agents' edit engine"), 'fix-agents-edit-engine');
    assert.equal(slug('`npm run bench` and the_floor'), 'npm-run-bench-and-the_floor');
  });

  test('finds the targets of links, images and written-out URLs, not code', () => {
    const prose = (line: string) => withoutInlineCode(line);
    assert.deepEqual(targetsOf(prose('See [a](docs/a.md#b), ![i](img.png "t") and <https://example.com/x>.')), [
      'docs/a.md#b',
      'img.png',
      'https://example.com/x',
    ]);
    assert.deepEqual(targetsOf(prose('[ref]: ../shared/spec.md')), ['../shared/spec.md']);
    assert.deepEqual(targetsOf(prose('A value such as `https://api.openai.com/v1` is code.')), []);
    assert.deepEqual(targetsOf(prose('[`bench/x.mjs`](../bench/x.mjs)')), ['../bench/x.mjs']);
  });

  test('links: local examples pass; other hosts, missing files and anchors fail', () => {
    assert.equal(linkProblem('README.md', 'http://127.0.0.1:8787/console'), null);
    assert.equal(linkProblem('README.md', 'http://localhost:8787'), null);
    assert.equal(linkProblem('README.md', 'docs/operations.md#fuzzing'), null);
    assert.match(linkProblem('README.md', 'https://github.com/x/y') ?? '', /leaves the repository/);
    assert.match(linkProblem('README.md', '../shared/spec/model-gateway-api.md') ?? '', /outside the repository/);
    assert.match(linkProblem('docs/api.md', '../shared/spec/model-gateway-api.md') ?? '', /no such file/);
    assert.match(linkProblem('README.md', 'docs/nothing-here.md') ?? '', /no such file/);
    assert.match(linkProblem('README.md', 'docs/operations.md#no-such-heading') ?? '', /no heading/);
  });

  test('history patterns catch a work log and leave reference text alone', () => {
    const flagged = (text: string) => HISTORY.filter(({ pattern }) => pattern.test(withoutInlineCode(text))).map(({ what }) => what);
    for (const text of [
      'One run (2026-11-28 12:41-12:49 UTC, 6569340) gave 5.0x.',
      'the second pass on the hot path (issue 16)',
      'fixed in #36',
      'On the fifth session, CPU fell.',
      "This session's VM is faster.",
      'after the session, every target was met',
      'on this shared box, load average 4.4',
      'a freshly booted machine',
    ]) {
      assert.notDeepEqual(flagged(text), [], text);
    }
    for (const text of [
      'The cookie `svc_session` is httpOnly; only the SHA-256 of its session token is stored.',
      'Ends this session / every session of the address, on the server.',
      'A banner appears; "Sign in with the new wallet" ends the session and starts a new sign-in.',
      '`created_at` looks like `2026-11-21T13:15:56.141000002Z`; `--expires 2026-12-31`.',
      'See [Fix agents](#fix-agents) and the 16-chunk stream; boot: config -> dependencies -> app.',
      'Check the box under Rules, then save.',
    ]) {
      assert.deepEqual(flagged(text), [], text);
    }
  });
});

describe('the documents are reference', () => {
  for (const path of DOCUMENTS) {
    test(`${path}: every link resolves inside the repository`, () => {
      assert.deepEqual(problemsOf(path).links, []);
    });
    test(`${path}: no work-log text (dates, issue numbers, sessions, machines)`, () => {
      assert.deepEqual(problemsOf(path).history, []);
    });
  }
});

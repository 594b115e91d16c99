#!/usr/bin/env node
/**
 * Fails when a citation of the contract in the tree does not resolve to an anchor of docs/contract.md,
 * or when a numbered rule is cited without the section that makes it unambiguous (the spec has several
 * lists numbered from 1: variables, run, auth, delivery).
 *
 *   node scripts/check-citations.mjs [root] [contract-file]
 *
 * root defaults to the repository this script lives in; contract-file defaults to docs/contract.md and is
 * resolved against root. The files scanned are the git-tracked ones (or, outside a git work tree, every
 * file under root), minus package-lock.json, anything under dist/ or node_modules/, binary files and the
 * contract file itself.
 *
 * Citation forms (see docs/contract.md for what each means):
 *   D<n>, D<n><letter>                      -> #d<n><letter>
 *   spec <section> rule(s) <n>[-<m>][, <k>]   -> #spec-<section>-rule-<n>   (also "layer", for the
 *                                                authorization layers)
 *   spec "<Section name>"                     -> #spec-<slug of the name>
 *   guide convention(s) <n>                   -> #guide-convention-<n>
 * A "rule <n>", "layer <n>" or "convention <n>" outside those forms, spec "<Section>" followed by a
 * bare number, and "guide #<n>" are ambiguous and fail. "issue <n>" fails too: the tracker is not part of the
 * repository, so a reader could not follow it; the contract or an ADR says the same thing for good.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.argv[2] ?? join(here, '..'));
const contractPath = resolve(root, process.argv[3] ?? join('docs', 'contract.md'));
const contractRel = relative(root, contractPath).split(sep).join('/');

// A number list as written after "rules": 4, 4-9, 4–9, "4, 8", "1 and 2".
const NUMS = String.raw`\d+(?:\s*(?:[-–]|,|\band\b|\bor\b|&)\s*\d+)*`;
// Whitespace that may include a line break and the next line's comment leader, so that a citation the
// formatter wrapped (its first words ending one comment line, its number starting the next) still reads
// as one.
const WS = String.raw`(?:[ \t]|\r?\n[ \t]*(?:\/\/+|\*(?!\/)|#+)?[ \t]*)+`;

const PATTERNS = {
  // Uppercase D and digits as a whole word; not after characters that make it part of a hex colour, a
  // variable or a path ("#D32", "$D1", "x.D3"), nor before ".word" ("D3.js").
  decision: /(?<![\w#$.%&+=@])D(\d+)([a-z]?)(?!\w|\.\w)/g,
  specRule: new RegExp(String.raw`\bspec${WS}"?([A-Za-z][\w-]*)"?${WS}(rule|layer)s?${WS}(${NUMS})`, 'gi'),
  // A section name starts with a letter, which leaves out placeholders and template expressions.
  specSection: new RegExp(
    String.raw`\bspec(?:'s|ification's)?${WS}(?:table${WS}|section${WS})?"([A-Za-z][^"\n]{0,59})"`,
    'gi',
  ),
  guide: new RegExp(String.raw`\bguide${WS}conventions?${WS}(${NUMS})`, 'gi'),
  // Optionally led by "spec", so that a spec rule cited without its section is reported whole.
  numbered: new RegExp(String.raw`(?:\bspec${WS})?\b(rule|layer|convention)s?${WS}(${NUMS})`, 'gi'),
  // An issue of our tracker: it means nothing to a reader of the repository, who has the contract and the ADRs.
  issue: new RegExp(String.raw`\bissues?${WS}#?\d+`, 'gi'),
  // The guide's conventions by number sign: resolvable by a person, but not by a link.
  guideHash: new RegExp(String.raw`\bguide${WS}#(\d+)\b`, 'gi'),
  // A section name, quoted or not, then a bare number: a numbered item without saying which numbering.
  specNumber: new RegExp(
    String.raw`\bspec${WS}(?!(?:rule|layer|convention)s?\b)("[^"\n]{1,60}"|[A-Za-z][\w-]*)${WS}(${NUMS})(?!\w)`,
    'gi',
  ),
};

/** The spec's numbered lists, by the section word a citation uses; for suggestions only. */
const SECTIONS = {
  variables: 'variables',
  variable: 'variables',
  run: 'run',
  auth: 'auth',
  authentication: 'auth',
  delivery: 'delivery',
  authorization: 'authorization',
  layers: 'authorization',
};

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function headingSlug(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function nameSlug(text) {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function readAnchors(path) {
  let text;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    console.error(`check-citations: cannot read the contract file ${path}: ${err.message}`);
    process.exit(2);
  }
  const anchors = new Set();
  for (const m of text.matchAll(/<a\s[^>]*?\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  const seen = new Map();
  for (const m of text.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = headingSlug(m[1]);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

function listFiles(dir) {
  try {
    const out = execFileSync('git', ['ls-files', '-z'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 64 * 1024 * 1024,
    });
    // git ls-files answers for the enclosing repository even when dir is only a folder of it, relative
    // to dir, which is what we want.
    return out.split('\0').filter(Boolean);
  } catch {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
      .filter((p) => !p.split('/').some((part) => part === '.git' || part === 'node_modules'));
  }
}

function skipped(path) {
  const parts = path.split('/');
  return (
    path === contractRel ||
    parts.at(-1) === 'package-lock.json' ||
    parts.includes('dist') ||
    parts.includes('node_modules')
  );
}

function expand(list) {
  const numbers = [];
  for (const part of list.split(/\s*(?:,|\band\b|\bor\b|&)\s*/)) {
    const range = part.match(/^(\d+)\s*[-–]\s*(\d+)$/);
    if (range) {
      const [a, b] = [Number(range[1]), Number(range[2])];
      if (b > a && b - a <= 50) for (let n = a; n <= b; n++) numbers.push(n);
      else numbers.push(a, b);
    } else if (/^\d+$/.test(part)) numbers.push(Number(part));
  }
  return numbers;
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

function lineOf(starts, offset) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

const oneLine = (s) => s.replace(/\s+/g, ' ').trim();

function suggestion(noun, nums, before, after) {
  const n = oneLine(nums);
  const many = /\D/.test(n);
  if (noun === 'convention') return `guide convention${many ? 's' : ''} ${n}`;
  if (noun === 'layer') return `spec authorization layer${many ? 's' : ''} ${n}`;
  const word = before.match(/([A-Za-z]+)"?\s*$/)?.[1]?.toLowerCase() ?? '';
  const of = after.match(/^\s*of\s+(?:the\s+)?"?([A-Za-z]+)/i)?.[1]?.toLowerCase() ?? '';
  const section = SECTIONS[word] ?? SECTIONS[of] ?? '<section>';
  return `spec ${section} ${section === 'authorization' ? 'layer' : 'rule'}${many ? 's' : ''} ${n}`;
}

function check(path, text, anchors, problems) {
  const starts = lineStarts(text);
  const at = (offset) => `${path}:${lineOf(starts, offset)}`;
  let count = 0;
  const need = (offset, citation, anchor) => {
    count++;
    if (!anchors.has(anchor)) problems.push(`${at(offset)}: ${citation}: no anchor #${anchor} in ${contractRel}`);
  };
  const covered = [];

  for (const m of text.matchAll(PATTERNS.decision)) {
    need(m.index, `D${m[1]}${m[2]}`, `d${m[1]}${m[2]}`);
  }
  for (const m of text.matchAll(PATTERNS.specRule)) {
    covered.push([m.index, m.index + m[0].length]);
    const section = m[1].toLowerCase();
    const noun = m[2].toLowerCase();
    for (const n of expand(m[3])) need(m.index, `spec ${section} ${noun} ${n}`, `spec-${section}-${noun}-${n}`);
  }
  for (const m of text.matchAll(PATTERNS.guide)) {
    covered.push([m.index, m.index + m[0].length]);
    for (const n of expand(m[1])) need(m.index, `guide convention ${n}`, `guide-convention-${n}`);
  }
  for (const m of text.matchAll(PATTERNS.specSection)) {
    need(m.index, `spec "${oneLine(m[1])}"`, `spec-${nameSlug(m[1])}`);
  }
  const inside = (i) => covered.some(([a, b]) => i >= a && i < b);
  const ambiguous = (m, noun, nums, before) => {
    covered.push([m.index, m.index + m[0].length]);
    count++;
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 40);
    problems.push(
      `${at(m.index)}: "${oneLine(m[0])}" is ambiguous: write "${suggestion(noun, nums, before, after)}" (see ${contractRel})`,
    );
  };
  for (const m of text.matchAll(PATTERNS.numbered)) {
    if (inside(m.index) || inside(m.index + m[0].length - 1)) continue;
    ambiguous(m, m[1].toLowerCase(), m[2], text.slice(Math.max(0, m.index - 40), m.index));
  }
  for (const m of text.matchAll(PATTERNS.guideHash)) ambiguous(m, 'convention', m[1], '');
  for (const m of text.matchAll(PATTERNS.issue)) {
    count++;
    problems.push(
      `${at(m.index)}: "${oneLine(m[0])}" names an issue of the tracker: cite the contract (${contractRel}) or an ADR (docs/decisions/) instead`,
    );
  }
  for (const m of text.matchAll(PATTERNS.specNumber)) {
    if (inside(m.index) || inside(m.index + m[0].length - 1)) continue;
    ambiguous(m, 'rule', m[2], m[1]);
  }
  return count;
}

const anchors = readAnchors(contractPath);
const problems = [];
let citations = 0;
let files = 0;
for (const path of listFiles(root)) {
  if (skipped(path)) continue;
  let buf;
  try {
    buf = readFileSync(join(root, path));
  } catch {
    continue; // tracked but deleted in the working tree
  }
  if (buf.subarray(0, 8000).includes(0)) continue;
  files++;
  citations += check(path, buf.toString('utf8'), anchors, problems);
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  console.error(`check-citations: ${problems.length} of ${citations} citations in ${files} files do not resolve`);
  process.exit(1);
}
console.log(`check-citations: ${citations} citations in ${files} files, all resolve in ${contractRel}`);

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to dashes. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(text: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = /^#{1,6}\s+(.*)$/.exec(line);
    if (m && !fenced) out.add(anchor(m[1] ?? ''));
  }
  return out;
}

describe('README and docs/', () => {
  it('the README top fits one screen: at most 60 lines, with the two commands and an example comment', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(60);
    expect(readme).toContain('npm ci');
    expect(readme).toContain('npm test');
    expect(readme).toMatch(/> ### RepGen: /);
  });

  it.each(pages)('every relative link of %s points at a file (and heading) that exists', (page) => {
    const text = readFileSync(join(root, page), 'utf8');
    const broken: string[] = [];
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1] ?? '';
      if (/^[a-z]+:/.test(target)) continue;
      const [file, hash] = target.split('#');
      const path = file ? resolve(dirname(join(root, page)), file) : join(root, page);
      if (!existsSync(path)) {
        broken.push(target);
        continue;
      }
      if (hash && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(hash)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it('the docs pages keep the facts the long README had: every setting table is still there', () => {
    const all = pages.map((p) => readFileSync(join(root, p), 'utf8')).join('\n');
    for (const name of [
      'REPGEN_SANDBOX',
      'REPGEN_K8S_NAMESPACE',
      'APP_ID',
      'REPGEN_LLM_TIMEOUT_MS',
      'REPGEN_CONFIRM_RUNS',
      'REPGEN_EMBED_MODEL',
      'caps.attempts',
      'REPGEN_MAX_ISSUE_BYTES',
    ]) {
      expect(all).toContain(`\`${name}\``);
    }
  });

  it("docs/sandbox.md sizes /tmp and /dev/shm as the sandbox does: half the run's memoryMb each (test/exec/sandbox/escape-suite.ts #21 measures it)", () => {
    const page = readFileSync(join(root, 'docs/sandbox.md'), 'utf8').replace(/\s+/g, ' ');
    expect(page).toContain("private tmpfs `/tmp` and `/dev/shm` (each half the run's `memoryMb`: 2048 MB at the default 4096");
    expect(page).not.toContain("each the run's `memoryMb`)");
  });

  it("app.yml's comment does not send people to `repgen serve` without APP_ID (that exits 2)", () => {
    const manifest = readFileSync(join(root, 'app.yml'), 'utf8');
    expect(manifest).not.toMatch(/run `repgen serve` without APP_ID/);
    expect(manifest).toMatch(/settings\/apps\/new/);
  });
});

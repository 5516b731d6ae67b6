import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { f2pByHand } from '../../src/workspace/bench-case.js';
import { runByHand } from '../../src/workspace/bench-f2p.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** A checkout with its package under src/ whose VALUE is `value`. */
function srcCheckout(value: number): string {
  const dir = makeTempDir('repgen-hand-src-');
  mkdirSync(join(dir, 'src', 'toypkg'), { recursive: true });
  writeFileSync(join(dir, 'src', 'toypkg', '__init__.py'), `VALUE = ${value}\n`);
  return dir;
}

describe("the bench's run by hand, as a maintainer runs the posted script", () => {
  const script = 'import toypkg\nassert toypkg.VALUE == 2, toypkg.VALUE\n';

  it('imports a src/ layout project from its checkout', async () => {
    const r = await runByHand(script, srcCheckout(1), { python: '/usr/bin/python3', timeoutMs: 30_000 });
    expect(r.exitCode).toBe(1);
    expect(r.lastLine).toBe('AssertionError: 1');
  });

  it('uses the interpreter of the environment RepGen built for the run, and judges fail-to-pass with it', async () => {
    const dir = makeTempDir('repgen-hand-env-');
    const marker = join(dir, 'used');
    const envPython = join(dir, 'python');
    writeFileSync(envPython, `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/python3 "$@"\n`);
    chmodSync(envPython, 0o755);
    const row = await f2pByHand(
      { outcome: { status: 'reproduced', script, env: { python: envPython } }, fixCheck: { verdict: 'fixed' } },
      srcCheckout(1),
      srcCheckout(2),
      { python: '/nonexistent/python', timeoutMs: 30_000 },
    );
    expect(existsSync(marker)).toBe(true);
    expect(row).toMatchObject({ buggyExit: 1, fixedExit: 0, falseClaim: false });
  });

  it("records a behavioural reproduction's oracle at both commits, from the fix check", async () => {
    const oracle = {
      assertion: 'assert toypkg.VALUE == 2, toypkg.VALUE',
      expected: '2',
      quote: 'VALUE is 1, expected 2',
      atBuggy: '1',
      atFix: null,
      heldAtFix: true,
    };
    const row = await f2pByHand(
      { outcome: { status: 'reproduced', script }, fixCheck: { verdict: 'fixed', oracle } },
      srcCheckout(1),
      srcCheckout(2),
      { python: '/usr/bin/python3', timeoutMs: 30_000 },
    );
    expect(row).toMatchObject({ byHand: true, oracle: 'expected 2: buggy 1; fix holds' });
  });

  it("a hand run stopped at the project's compiled extension is no contradiction, nor a confirmation: it says why", async () => {
    // detectron2's shape: `from toypkg import _C` needs a build the hand run does not have.
    const ext = 'from toypkg import _C\nimport toypkg\nassert toypkg.VALUE == 2, toypkg.VALUE\n';
    const row = await f2pByHand(
      { outcome: { status: 'reproduced', script: ext }, fixCheck: { verdict: 'fixed' } },
      srcCheckout(1),
      srcCheckout(2),
      { python: '/usr/bin/python3', timeoutMs: 30_000 },
    );
    expect(row).toMatchObject({ byHand: null, falseClaim: false, buggyExit: 1, fixedExit: 1 });
    expect(row.note).toMatch(
      /^by hand: cannot run here, the project's compiled extension is not built for a hand run \(ImportError: cannot import name '_C'/,
    );
    // Any other failure at the fix still contradicts the claim.
    const other = await f2pByHand(
      { outcome: { status: 'reproduced', script: 'import toypkg\nassert toypkg.VALUE == 3\n' }, fixCheck: { verdict: 'fixed' } },
      srcCheckout(1),
      srcCheckout(2),
      { python: '/usr/bin/python3', timeoutMs: 30_000 },
    );
    expect(other).toMatchObject({ falseClaim: true, note: 'claimed fixed, but by hand it exits 1 at fix_commit' });
  });
});

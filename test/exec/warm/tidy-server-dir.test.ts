import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLocalExecutor } from '../../../src/exec/local/executor.js';
import { WARM_NOTE } from '../../../src/exec/warm/pool.js';

const workRoot = mkdtempSync(join(tmpdir(), 'repgen-warm-tidy-'));
chmodSync(workRoot, 0o755);
afterAll(() => rmSync(workRoot, { recursive: true, force: true }));

// Issue 38, item 7: a module that writes a file when it is imported (a cache, a lock, a downloaded asset) finds
// it on every run, warm as cold. The warm server imported it once; the host used to empty the server's work dir
// after each run, so the next run forked from that server had the module but not its file.

describe("a warm server's work dir after a run", () => {
  it('keeps what an import wrote there, removes what runs added, and retires a server whose files a run changed', async () => {
    const ws = mkdtempSync(join(workRoot, 'ws-'));
    chmodSync(ws, 0o755);
    writeFileSync(join(ws, 'writer.py'), 'import os\nPATH = os.path.abspath("made-at-import.txt")\nopen(PATH, "w").write("fresh")\n');
    chmodSync(join(ws, 'writer.py'), 0o644);
    const run = (body: string) => ({
      files: [{ path: 'main.py', content: `import writer, os\n${body}` }],
      entry: 'main.py',
      workspace: { hostPath: ws },
    });
    const read = 'print(open(writer.PATH).read(), sorted(os.listdir(os.path.dirname(writer.PATH))))\n';
    const cold = createLocalExecutor({ workRoot, warmPool: 'off' });
    const reference = await cold.run(run('print(open(writer.PATH).read())\n'));
    expect(reference.stdout).toBe('fresh\n');
    const ex = createLocalExecutor({ workRoot, warmPool: 'always' });
    try {
      const first = await ex.run(run(`open(os.path.join(os.path.dirname(writer.PATH), "added-by-run"), "w").write("x")\n${read}`));
      const second = await ex.run(run(read));
      for (const r of [first, second]) expect(r.notes).toContain(WARM_NOTE);
      expect(first.stdout).toBe("fresh ['added-by-run', 'made-at-import.txt', 'out', 'run-1']\n");
      // Same server (run-2), the module not imported again: its file is still there, what the first run added is not.
      expect(second.stderr).toBe('');
      expect(second.stdout).toBe("fresh ['made-at-import.txt', 'out', 'run-2']\n");
      // A run that changes the import's file: the next run gets a fresh server, which writes it anew, as a cold run.
      const changer = await ex.run(run('open(writer.PATH, "w").write("changed")\nprint("changed")\n'));
      expect(changer.stdout).toBe('changed\n');
      const after = await ex.run(run(read));
      expect(after.notes).toContain(WARM_NOTE);
      expect(after.stdout).toBe("fresh ['made-at-import.txt', 'out', 'run-1']\n");
    } finally {
      await ex.close();
    }
  });
});

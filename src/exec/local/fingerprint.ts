import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, realpath, stat } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** sys.path of a plain interpreter start: -I, so no PYTHON* variable or user site of ours shapes the answer. */
const SYS_PATH = 'import json, sys; print(json.dumps([p for p in sys.path if p]))';

async function statLine(path: string): Promise<string> {
  const st = await stat(path).catch(() => null);
  return st ? `${path}\t${st.mtimeMs}\t${st.size}` : `${path}\tabsent`;
}

/**
 * What the local executor's interpreter can import hangs on: its binary (path, realpath, mtime, size), every
 * folder on its sys.path (installing or removing a package adds or drops an entry, which moves the folder's
 * mtime), the extra read-only paths bound into the sandbox, and whether a GPU device is there (the probe
 * reports CUDA). A sha256 of all that, or null when the interpreter would not say its sys.path. It runs the
 * configured interpreter on the host with `-c` and a fixed one-liner: no code of a report runs here.
 */
export async function interpreterFingerprint(interpreter: string, readOnlyPaths: string[]): Promise<string | null> {
  let paths: string[];
  try {
    const { stdout } = await run(interpreter, ['-I', '-c', SYS_PATH], { env: {}, timeout: 15_000, maxBuffer: 1_000_000 });
    const parsed: unknown = JSON.parse(stdout);
    if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string')) return null;
    paths = parsed;
  } catch {
    return null;
  }
  const real = await realpath(interpreter).catch(() => interpreter);
  const gpus = (await readdir('/dev').catch(() => [] as string[])).filter((d) => d.startsWith('nvidia')).sort();
  const lines = [
    `interpreter\t${interpreter}\t${real}`,
    await statLine(interpreter),
    await statLine(real),
    ...(await Promise.all([...paths, ...readOnlyPaths].map(statLine))),
    `gpu\t${gpus.join(',')}`,
  ];
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

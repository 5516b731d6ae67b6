import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

/**
 * A fresh folder under the temp root, removed after the test file (test/helpers/remove-temp-dirs.ts, a setup file of
 * both vitest configs). Callable anywhere: at the top of a file, in a hook or in a test.
 */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes every folder makeTempDir made so far. */
export function removeTempDirs(): void {
  for (const dir of made) {
    rmSync(dir, { recursive: true, force: true });
    made.delete(dir);
  }
}

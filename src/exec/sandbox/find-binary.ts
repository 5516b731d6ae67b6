import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { SAFE_PATH } from './script-env.js';

/** First executable of that name on the safe PATH and the parent's PATH. */
export function findBinary(name: string, hostPath = process.env.PATH ?? ''): string | null {
  const dirs = [...SAFE_PATH.split(':'), ...hostPath.split(':')].filter((d) => d.startsWith('/'));
  for (const dir of new Set(dirs)) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

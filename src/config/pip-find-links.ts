import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readBoundedSync } from '../host/read-bounded.js';

/**
 * The local wheel folders this host's pip is told to look in (PIP_FIND_LINKS, then pip's config files), for the
 * env builder's default (REPGEN_ENV_FIND_LINKS): a machine that keeps a CPU build of torch in such a folder gets it
 * instead of PyPI's CUDA build. Only existing absolute folders; URLs are left to the index settings. Reads files only.
 */
export function pipFindLinks(env: NodeJS.ProcessEnv = process.env, home = homedir()): string[] {
  const found: string[] = [];
  const add = (value: string): void => {
    for (const v of value.split(/\s+/)) {
      const path = v.replace(/^file:\/\//, '');
      if (path.startsWith('/') && !found.includes(path) && existsSync(path)) found.push(path);
    }
  };
  if (env.PIP_FIND_LINKS) add(env.PIP_FIND_LINKS);
  const files = ['/etc/pip.conf', '/etc/xdg/pip/pip.conf', join(home, '.config/pip/pip.conf'), join(home, '.pip/pip.conf')];
  for (const file of files) {
    let text: string;
    try {
      text = readBoundedSync(file, { maxBytes: 100_000 }).toString('utf8');
    } catch {
      continue;
    }
    for (const m of text.matchAll(/^\s*find[-_]links\s*=\s*(.+)$/gm)) add(m[1] ?? '');
  }
  return found;
}

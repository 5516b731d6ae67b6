import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { promisify } from 'node:util';
import { normaliseName, sha256 } from '../lock/uv-lock.js';

const run = promisify(execFile);

/** The base interpreter (REPGEN_PYTHON) as the uv builder makes every venv from it. */
export interface PythonInfo {
  version: string;
  minor: string;
  /** sys.base_prefix, resolved. */
  prefix: string;
  /** sys.prefix, resolved: a venv's folder when REPGEN_PYTHON is one (else the same as `prefix`). */
  venvPrefix: string;
  /** The site-packages of that venv ([] when the base is no venv): an overlay sees them through a `.pth`. */
  venvSite: string[];
  /** sha256 of the interpreter's path, prefixes, version and installed distributions: part of every cache key. */
  identity: string;
  /** The distributions it holds (PEP 503 name → version): an overlay takes one only where its version fits the lock. */
  installed: Record<string, string>;
}

/**
 * Reads the base interpreter: its version, prefixes, a venv's site-packages, and an identity that changes with any of
 * them or with its installed distributions (issue 39, item 8: envs were reused under another base).
 */
export function readBaseInterpreter(python: string): Promise<PythonInfo> {
  // Isolated (-I) but with site: the distributions of its site-packages are part of its identity.
  const code =
    'import sys, json, site, importlib.metadata as m\n' +
    'd = sorted("%s==%s" % ((x.metadata["Name"] or "").lower(), x.version) for x in m.distributions())\n' +
    'v = sys.prefix != sys.base_prefix\n' +
    'print(json.dumps({"version": sys.version.split()[0], "base": sys.base_prefix, "prefix": sys.prefix,' +
    ' "site": site.getsitepackages() if v else [], "dists": d}))';
  return run(python, ['-I', '-c', code], { maxBuffer: 16 << 20 }).then(async ({ stdout }) => {
    const o = JSON.parse(stdout.trim().split('\n').pop() ?? '') as {
      version: string;
      base: string;
      prefix: string;
      site: string[];
      dists: string[];
    };
    const [prefix, venvPrefix] = await Promise.all([realpath(o.base), realpath(o.prefix)]);
    const venvSite = (await Promise.all(o.site.map((p) => realpath(p).catch(() => null)))).filter((p): p is string => !!p);
    const identity = sha256(JSON.stringify({ path: python, prefix, venvPrefix, version: o.version, dists: o.dists }));
    const installed: Record<string, string> = {};
    for (const d of o.dists) {
      const i = d.indexOf('==');
      const name = normaliseName(d.slice(0, i));
      // A name listed twice (two copies on sys.path) keeps the first listed.
      if (i > 0 && name && installed[name] === undefined) installed[name] = d.slice(i + 2);
    }
    return { version: o.version, minor: o.version.split('.').slice(0, 2).join('.'), prefix, venvPrefix, venvSite, identity, installed };
  });
}

/** A word for `/bin/sh -c` (the paths are RepGen's own, but nothing is assumed about them). */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Folders every bwrap sandbox binds already (src/exec/sandbox/sandbox.ts). */
export function underSystemDirs(path: string): boolean {
  return ['/usr', '/bin', '/lib', '/lib64'].some((p) => path === p || path.startsWith(`${p}/`));
}

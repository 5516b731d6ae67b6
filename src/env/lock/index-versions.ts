import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { satisfies } from '../compare-versions.js';
import { parseWheelName, sdistVersion, wheelFits, type WheelName } from './uv-lock.js';

/**
 * The versions of one distribution that this interpreter could install, read from the index's simple page (PEP 503
 * HTML or PEP 691 JSON) and the find-links folders: what a substitution may choose from. Only file names are read;
 * nothing is downloaded or run.
 */
export interface AvailableVersions {
  /** Versions with a wheel that fits the interpreter. */
  wheels: string[];
  /** Versions with a source distribution only (a build would run its setup.py). */
  sdists: string[];
  /** Some wheel of the project is platform-specific (a compiled package: building one from source is slow and fragile). */
  compiled: boolean;
}

interface FileEntry {
  name: string;
  requiresPython: string | null;
  yanked: boolean;
}

function unescapeHtml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

/** The files of a PEP 503 page. */
export function parseSimpleHtml(html: string): FileEntry[] {
  const out: FileEntry[] = [];
  for (const m of html.matchAll(/<a\s([^>]*)>([^<]*)<\/a>/gi)) {
    const attrs = m[1] as string;
    const rp = /data-requires-python="([^"]*)"/i.exec(attrs);
    out.push({
      name: (m[2] as string).trim(),
      requiresPython: rp ? unescapeHtml(rp[1] as string) : null,
      yanked: /data-yanked/i.test(attrs),
    });
  }
  return out;
}

function parseSimpleJson(text: string): FileEntry[] {
  const data = JSON.parse(text) as { files?: Array<{ filename?: string; 'requires-python'?: string | null; yanked?: unknown }> };
  return (data.files ?? []).flatMap((f) =>
    typeof f.filename === 'string' ? [{ name: f.filename, requiresPython: f['requires-python'] ?? null, yanked: Boolean(f.yanked) }] : [],
  );
}

/** Sorts index files by what they offer this interpreter. */
export function classifyFiles(files: FileEntry[], name: string, pythonVersion: string, arch: string): AvailableVersions {
  const wheels = new Set<string>();
  const sdists = new Set<string>();
  const full = `${pythonVersion}.0`;
  let compiled = false;
  for (const f of files) {
    const w = parseWheelName(f.name);
    if (w?.name === name && !w.platform.includes('any')) compiled = true;
    if (f.yanked || (f.requiresPython && !satisfies(full, f.requiresPython))) continue;
    if (w) {
      if (w.name === name && wheelFits(w, pythonVersion, arch)) wheels.add(w.version);
      continue;
    }
    const v = sdistVersion(f.name, name);
    if (v) sdists.add(v);
  }
  for (const v of wheels) sdists.delete(v);
  return { wheels: [...wheels], sdists: [...sdists], compiled };
}

async function indexFiles(indexUrl: string, name: string, signal: AbortSignal): Promise<FileEntry[]> {
  const base = indexUrl.endsWith('/') ? indexUrl : `${indexUrl}/`;
  if (base.startsWith('file:')) {
    const html = await readFile(`${fileURLToPath(base)}${name}/index.html`, 'utf8').catch(() => '');
    return parseSimpleHtml(html);
  }
  const res = await fetch(`${base}${name}/`, {
    signal,
    headers: { accept: 'application/vnd.pypi.simple.v1+json, text/html;q=0.1' },
  }).catch(() => null);
  if (!res?.ok) return [];
  const text = await res.text();
  return (res.headers.get('content-type') ?? '').includes('json') ? parseSimpleJson(text) : parseSimpleHtml(text);
}

/** Every version of `name` the indexes and find-links folders offer this interpreter. */
export async function listAvailableVersions(
  name: string,
  where: { indexUrls: string[]; findLinks: string[] },
  pythonVersion: string,
  signal: AbortSignal,
  arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64',
): Promise<AvailableVersions> {
  const files: FileEntry[] = [];
  for (const url of where.indexUrls) files.push(...(await indexFiles(url, name, signal)));
  for (const dir of where.findLinks) {
    const names = await readdir(dir).catch(() => [] as string[]);
    files.push(...names.map((n) => ({ name: n, requiresPython: null, yanked: false })));
  }
  return classifyFiles(files, name, pythonVersion, arch);
}

/** The wheels of the find-links folders, by their file names. */
export async function localWheels(dirs: string[]): Promise<WheelName[]> {
  const out: WheelName[] = [];
  for (const dir of dirs) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const w = parseWheelName(name);
      if (w) out.push(w);
    }
  }
  return out;
}

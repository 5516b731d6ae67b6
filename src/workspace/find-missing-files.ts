// Files of a commit's tree whose content a repository lacks: a partial mirror (`--filter=blob:none`), a blob that
// was never fetched or was lost. A checkout writes every other file and says which ones it could not (issue 39).
import { runGit } from '../host/git.js';
import { WorkspaceError } from './errors.js';

/** The most bytes of one object listing read (41 bytes an object: 1.6 million objects). */
const LIST_MAX_BYTES = 64 << 20;

/** Paths a note names before it says how many more there are. */
const NOTE_PATHS = 8;

/** Paths evidence.json lists (the count is always whole). */
export const RECORDED_PATHS = 50;

/**
 * The paths of `sha`'s tree whose blob `gitDir` does not hold, sorted; [] when every one is there, null when git
 * cannot walk the commit (not in the repository: the checkout then says so). Two batch calls whatever the tree's
 * size, and the second only when something is missing. `rev-list --missing=print` never fetches a missing object
 * (a partial clone would otherwise reach for its promisor remote), and neither call reads a blob.
 */
export async function findMissingFiles(gitDir: string, sha: string, signal?: AbortSignal): Promise<string[] | null> {
  const walk = await runGit(['rev-list', '--objects', '--no-object-names', '--no-walk', '--missing=print', sha], {
    cwd: gitDir,
    signal,
    maxBytes: LIST_MAX_BYTES,
  });
  if (walk.code !== 0) return null;
  if (walk.truncated) throw new WorkspaceError(`the tree of ${sha.slice(0, 12)} holds more objects than RepGen lists`);
  const missing = missingObjects(walk.stdout);
  if (missing.size === 0) return [];
  const tree = await runGit(['ls-tree', '-r', '-z', '--full-tree', sha], { cwd: gitDir, signal, maxBytes: LIST_MAX_BYTES });
  // A missing folder (tree object) hides the names of the files under it: nothing honest can be said of them.
  if (tree.code !== 0 || tree.truncated)
    throw new WorkspaceError(
      `the repository lacks ${missing.size} objects of ${sha.slice(0, 12)}, folders among them, so its files cannot be listed: ` +
        (tree.truncated ? 'the listing is too long' : lastLine(tree.stderr)),
    );
  return missingPaths(tree.stdout, missing);
}

/** The objects `rev-list --missing=print` marked missing (`?<oid>` lines). Pure. */
export function missingObjects(revList: string): Set<string> {
  const out = new Set<string>();
  for (const line of revList.split('\n')) if (/^\?[0-9a-f]{40,64}$/.test(line)) out.add(line.slice(1));
  return out;
}

/** The blob paths of `ls-tree -r -z` output whose object is in `missing`, sorted. Pure. */
export function missingPaths(lsTreeZ: string, missing: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const entry of lsTreeZ.split('\0')) {
    // `<mode> SP <type> SP <object> TAB <path>`: the path may hold anything but NUL.
    const m = /^\d+ blob ([0-9a-f]+)\t/.exec(entry);
    if (m && missing.has(m[1]!)) out.push(entry.slice(m[0].length));
  }
  return out.sort();
}

/**
 * What the comment and evidence.json say of a checkout that lacks `paths` at `at` (a ref): how many, and the first
 * few by name, each cut to a readable length with control characters shown as `?`. Pure.
 */
export function missingFilesNote(paths: readonly string[], at: string): string {
  const shown = paths.slice(0, NOTE_PATHS).map(showPath);
  const more = paths.length > NOTE_PATHS ? `, and ${paths.length - NOTE_PATHS} more` : '';
  const files = paths.length === 1 ? '1 file' : `${paths.length} files`;
  return `The checkout lacks ${files} the repository has at ${at} (missing from the mirror, so not checked out): ${shown.join(', ')}${more}.`;
}

/** `paths` as evidence.json records them: the whole count, the first RECORDED_PATHS names. Pure. */
export function missingFilesRecord(paths: readonly string[]): { count: number; paths: string[] } {
  return { count: paths.length, paths: paths.slice(0, RECORDED_PATHS) };
}

function showPath(path: string): string {
  const plain = path.replace(/[\u0000-\u001f\u007f]/g, '?');
  return plain.length > 160 ? `${plain.slice(0, 80)}…${plain.slice(-79)}` : plain;
}

function lastLine(text: string): string {
  return text.trim().split('\n').slice(-1)[0]?.slice(0, 300) || 'no message';
}

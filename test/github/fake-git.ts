import { createHash } from 'node:crypto';

/**
 * The git objects behind fake GitHub (test/github/fake-github.ts): blobs, trees, commits and branch refs, with real
 * git object ids, so the contents API and the git data API (refs, commits, trees, blobs) see one history. A tree is
 * kept flat (path → entry) and its folders are trees of their own, made as GitHub lists them. A commit the tests
 * never made (the tested commit a branch starts from) has the files `seed` gives it, or none.
 */
export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
}

export interface FakeCommit {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  /** The GitHub account GitHub names as the commit's author and committer. */
  by: string;
  /** Whether GitHub verified the commit's signature (it signs the commits an App makes through its API). */
  verified: boolean;
}

/** Who made a commit, as GitHub tells it. */
export interface CommitBy {
  login: string;
  verified: boolean;
}

/** The App's bot account: commits made through the fake's API (git data, contents) are its, signed. */
export const FAKE_APP: CommitBy = { login: 'repgen[bot]', verified: true };
/** A person who pushes to the branch with git: their commits are unsigned. */
export const FAKE_USER: CommitBy = { login: 'maintainer', verified: false };

export interface FakeGitStore {
  blobs: Map<string, Buffer>;
  trees: Map<string, Map<string, TreeEntry>>;
  commits: Map<string, FakeCommit>;
  /** `refs/heads/NAME` → commit sha. */
  refs: Map<string, string>;
  /** The commit a sha or branch name names; a sha never seen gets the seeded files (or none). */
  commit(refOrSha: string): FakeCommit | null;
  blob(content: Buffer | string): string;
  /** A tree from `base` (flat path → entry) with `changes` (null: removed); its folders become trees too. */
  tree(base: Map<string, TreeEntry>, changes: Map<string, TreeEntry | null>): string;
  /** A tree's direct entries as GitHub lists them (`recursive`: every path, folders included). */
  list(treeSha: string, recursive: boolean): { path: string; mode: string; type: string; sha: string; size?: number }[];
  /** A commit; `as`: who GitHub says made it (a person's unsigned push unless told). */
  makeCommit(tree: string, parents: string[], message: string, as?: CommitBy): FakeCommit;
  /** The text of `path` in `refOrSha`'s tree, with its blob sha; null when absent. */
  file(refOrSha: string, path: string): { content: string; sha: string } | null;
  /** Commits reachable from `refOrSha`, newest first, following first parents. */
  log(refOrSha: string): FakeCommit[];
}

const sha1 = (data: Buffer | string): string => createHash('sha1').update(data).digest('hex');

export function createFakeGitStore(seed: Record<string, Record<string, string>> = {}): FakeGitStore {
  const blobs = new Map<string, Buffer>();
  const trees = new Map<string, Map<string, TreeEntry>>();
  const commits = new Map<string, FakeCommit>();
  const refs = new Map<string, string>();

  const blob = (content: Buffer | string): string => {
    const bytes = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const sha = sha1(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]));
    blobs.set(sha, bytes);
    return sha;
  };
  /** Stores a flat tree (blobs only) and, for each folder, the tree of its part; returns the root's sha. */
  const store = (flat: Map<string, TreeEntry>): string => {
    const sorted = [...flat.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    const sha = sha1(`tree\0${sorted.map(([p, e]) => `${e.mode} ${p}\0${e.sha}`).join('\n')}`);
    if (trees.has(sha)) return sha;
    trees.set(sha, new Map(sorted));
    return sha;
  };
  /** The folder trees directly under a flat tree: name → sha. */
  const folders = (flat: Map<string, TreeEntry>): Map<string, string> => {
    const parts = new Map<string, Map<string, TreeEntry>>();
    for (const [p, e] of flat) {
      const at = p.indexOf('/');
      if (at < 0) continue;
      const name = p.slice(0, at);
      if (!parts.has(name)) parts.set(name, new Map());
      parts.get(name)!.set(p.slice(at + 1), e);
    }
    return new Map([...parts].map(([name, sub]) => [name, store(sub)]));
  };
  const tree = (base: Map<string, TreeEntry>, changes: Map<string, TreeEntry | null>): string => {
    const flat = new Map(base);
    for (const [p, e] of changes) {
      if (e) flat.set(p, e);
      else flat.delete(p);
    }
    return store(flat);
  };
  const makeCommit = (treeSha: string, parents: string[], message: string, as: CommitBy = FAKE_USER): FakeCommit => {
    const sha = sha1(`commit\0${treeSha}\0${parents.join(',')}\0${message}\0${commits.size}`);
    const c = { sha, tree: treeSha, parents, message, by: as.login, verified: as.verified };
    commits.set(sha, c);
    return c;
  };
  const commit = (refOrSha: string): FakeCommit | null => {
    const head = refs.get(`refs/heads/${refOrSha}`) ?? refOrSha;
    const known = commits.get(head);
    if (known) return known;
    if (!/^[0-9a-f]{4,40}$/i.test(head)) return null;
    // The tested commit: its files are the seed's, and it exists from the first time it is named.
    const files = seed[head] ?? {};
    const flat = new Map<string, TreeEntry>(
      Object.entries(files).map(([p, text]) => [p, { mode: '100644', type: 'blob', sha: blob(text) }]),
    );
    const c = { sha: head, tree: store(flat), parents: [], message: 'the tested commit', by: FAKE_USER.login, verified: false };
    commits.set(head, c);
    return c;
  };
  return {
    blobs,
    trees,
    commits,
    refs,
    commit,
    blob,
    tree,
    makeCommit,
    list(treeSha, recursive) {
      const flat = trees.get(treeSha);
      if (!flat) return [];
      const size = (e: TreeEntry) => (e.type === 'blob' ? { size: blobs.get(e.sha)?.length ?? 0 } : {});
      if (recursive) {
        const dirs = new Set(
          [...flat.keys()].flatMap((p) =>
            p
              .split('/')
              .slice(0, -1)
              .map((_, i, a) => a.slice(0, i + 1).join('/')),
          ),
        );
        const dirEntries = [...dirs].map((d) => {
          const sub = new Map([...flat].filter(([p]) => p.startsWith(`${d}/`)).map(([p, e]) => [p.slice(d.length + 1), e]));
          return { path: d, mode: '040000', type: 'tree', sha: store(sub) };
        });
        return [...dirEntries, ...[...flat].map(([path, e]) => ({ path, ...e, ...size(e) }))].sort((a, b) => (a.path < b.path ? -1 : 1));
      }
      const direct = [...flat].filter(([p]) => !p.includes('/')).map(([path, e]) => ({ path, ...e, ...size(e) }));
      const dirs = [...folders(flat)].map(([path, sha]) => ({ path, mode: '040000', type: 'tree', sha }));
      return [...direct, ...dirs].sort((a, b) => (a.path < b.path ? -1 : 1));
    },
    file(refOrSha, path) {
      const c = commit(refOrSha);
      const e = c ? trees.get(c.tree)?.get(path) : undefined;
      if (!e || e.type !== 'blob') return null;
      return { content: blobs.get(e.sha)?.toString('utf8') ?? '', sha: e.sha };
    },
    log(refOrSha) {
      const out: FakeCommit[] = [];
      for (let c = commit(refOrSha); c && out.length < 1000; c = c.parents[0] ? (commits.get(c.parents[0]) ?? null) : null) out.push(c);
      return out;
    },
  };
}

/** One git data API request (the path after `/repos/OWNER/REPO/`). */
export interface GitRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | null;
  query: URLSearchParams;
  /** `http://HOST/repos/OWNER/REPO`, for the `url` fields. */
  base: string;
}

const PERSON = { name: 'RepGen', email: 'repgen@example.com', date: '2026-01-01T00:00:00Z' };
const unprocessable = (message: string) => ({ status: 422, body: { message, documentation_url: 'https://docs.github.com/rest/git' } });
const notFound = { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest/git' } };

/** A commit as GET/POST git/commits answer it. */
function commitPayload(c: FakeCommit, base: string) {
  return {
    sha: c.sha,
    node_id: `C_${c.sha.slice(0, 12)}`,
    url: `${base}/git/commits/${c.sha}`,
    html_url: `${base.replace('/repos/', '/')}/commit/${c.sha}`,
    author: PERSON,
    committer: PERSON,
    message: c.message,
    tree: { sha: c.tree, url: `${base}/git/trees/${c.tree}` },
    parents: c.parents.map((p) => ({ sha: p, url: `${base}/git/commits/${p}`, html_url: `${base}/commit/${p}` })),
    verification: c.verified
      ? { verified: true, reason: 'valid', signature: '-----BEGIN PGP SIGNATURE-----', payload: `tree ${c.tree}`, verified_at: PERSON.date }
      : { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  };
}

/** The GitHub account in a commit's `author`/`committer` (GET commits, GET commits/REF). */
function account(login: string) {
  const bot = login.endsWith('[bot]');
  return {
    login,
    id: login.length,
    node_id: `U_${login}`,
    type: bot ? 'Bot' : 'User',
    site_admin: false,
    html_url: `https://github.com/${login}`,
  };
}

/** A commit as GET commits and GET commits/REF answer it: the git commit, with the accounts GitHub ties it to. */
function listedCommit(c: FakeCommit, base: string) {
  const p = commitPayload(c, base);
  const by = account(c.by);
  return {
    sha: c.sha,
    node_id: p.node_id,
    url: `${base}/commits/${c.sha}`,
    html_url: p.html_url,
    commit: p,
    author: by,
    committer: by,
    parents: p.parents,
  };
}

function refPayload(ref: string, sha: string, base: string) {
  return {
    ref,
    node_id: `REF_${sha.slice(0, 8)}`,
    url: `${base}/git/${ref}`,
    object: { sha, type: 'commit', url: `${base}/git/commits/${sha}` },
  };
}

/** A path GitHub accepts in a tree: relative, no empty, `.` or `..` part. */
const plainPath = (p: string): boolean => p !== '' && !p.startsWith('/') && p.split('/').every((x) => x !== '' && x !== '.' && x !== '..');

/**
 * GitHub's git data API over the store, shaped like its payloads: refs (create, get, fast-forward update), commits,
 * trees (with base_tree; entries by blob sha or inline content, a null sha removes), blobs, and the commit list of a
 * branch (`GET commits?sha=`). Null when the request is none of these.
 */
export function gitDataApi(git: FakeGitStore, r: GitRequest): { status: number; body: unknown } | null {
  const { method, path, body, base } = r;
  let m: RegExpMatchArray | null;
  if (method === 'POST' && path === 'git/refs') {
    const ref = String(body?.ref);
    if (git.refs.has(ref)) return unprocessable('Reference already exists');
    const c = git.commit(String(body?.sha));
    if (!c) return unprocessable('Object does not exist');
    git.refs.set(ref, c.sha);
    return { status: 201, body: refPayload(ref, c.sha, base) };
  }
  if (method === 'GET' && (m = path.match(/^git\/ref\/(heads\/.+)$/))) {
    const ref = `refs/${m[1]}`;
    const sha = git.refs.get(ref);
    return sha ? { status: 200, body: refPayload(ref, sha, base) } : notFound;
  }
  if (method === 'PATCH' && (m = path.match(/^git\/refs\/(heads\/.+)$/))) {
    const ref = `refs/${m[1]}`;
    const current = git.refs.get(ref);
    if (!current) return unprocessable('Reference does not exist');
    const next = git.commits.get(String(body?.sha));
    if (!next) return unprocessable('Object does not exist');
    // Without force, only a fast forward: the new commit must have the current head in its history.
    const ancestors = new Set<string>();
    const walk = [next.sha];
    while (walk.length) {
      const s = walk.pop()!;
      if (ancestors.has(s)) continue;
      ancestors.add(s);
      walk.push(...(git.commits.get(s)?.parents ?? []));
    }
    if (body?.force !== true && !ancestors.has(current)) return unprocessable('Update is not a fast forward');
    git.refs.set(ref, next.sha);
    return { status: 200, body: refPayload(ref, next.sha, base) };
  }
  if (method === 'GET' && (m = path.match(/^git\/commits\/([0-9a-f]{40})$/))) {
    const c = git.commits.get(m[1] ?? '');
    return c ? { status: 200, body: commitPayload(c, base) } : notFound;
  }
  if (method === 'POST' && path === 'git/commits') {
    const tree = String(body?.tree);
    const parents = Array.isArray(body?.parents) ? (body.parents as unknown[]).map(String) : [];
    if (!git.trees.has(tree)) return unprocessable('Tree SHA does not exist');
    if (parents.some((p) => !git.commits.has(p))) return unprocessable('Parent SHA does not exist or is not a commit object');
    return { status: 201, body: commitPayload(git.makeCommit(tree, parents, String(body?.message ?? ''), FAKE_APP), base) };
  }
  if (method === 'GET' && (m = path.match(/^git\/trees\/([0-9a-f]{40})$/))) {
    if (!git.trees.has(m[1] ?? '')) return notFound;
    const recursive = r.query.has('recursive');
    const tree = git
      .list(m[1] ?? '', recursive)
      .map((e) => ({ ...e, url: `${base}/git/${e.type === 'tree' ? 'trees' : 'blobs'}/${e.sha}` }));
    return { status: 200, body: { sha: m[1], url: `${base}/git/trees/${m[1]}`, tree, truncated: false } };
  }
  if (method === 'POST' && path === 'git/trees') {
    const baseTree = body?.base_tree === undefined ? new Map<string, TreeEntry>() : git.trees.get(String(body.base_tree));
    if (!baseTree) return unprocessable('base_tree is not a valid tree oid');
    const changes = new Map<string, TreeEntry | null>();
    for (const e of (body?.tree as Record<string, unknown>[] | undefined) ?? []) {
      const p = String(e.path);
      if (!plainPath(p)) return unprocessable(`tree.path contains a malformed path component: ${p}`);
      if (!['100644', '100755', '120000'].includes(String(e.mode)) || e.type !== 'blob')
        return unprocessable(`tree.mode or tree.type is not a blob's: ${String(e.mode)} ${String(e.type)}`);
      if (e.sha === null) changes.set(p, null);
      else if (typeof e.content === 'string') changes.set(p, { mode: String(e.mode), type: 'blob', sha: git.blob(e.content) });
      else if (typeof e.sha === 'string' && git.blobs.has(e.sha)) changes.set(p, { mode: String(e.mode), type: 'blob', sha: e.sha });
      else return unprocessable('tree.sha is not a valid blob');
    }
    const sha = git.tree(baseTree, changes);
    return { status: 201, body: { sha, url: `${base}/git/trees/${sha}`, tree: git.list(sha, false), truncated: false } };
  }
  if (method === 'POST' && path === 'git/blobs') {
    const bytes = Buffer.from(String(body?.content ?? ''), body?.encoding === 'base64' ? 'base64' : 'utf8');
    const sha = git.blob(bytes);
    return { status: 201, body: { sha, url: `${base}/git/blobs/${sha}` } };
  }
  if (method === 'GET' && (m = path.match(/^git\/blobs\/([0-9a-f]{40})$/))) {
    const bytes = git.blobs.get(m[1] ?? '');
    if (!bytes) return notFound;
    // GitHub wraps the base64 at 60 characters.
    const content = (bytes.toString('base64').match(/.{1,60}/g) ?? []).join('\n');
    return {
      status: 200,
      body: {
        sha: m[1],
        node_id: `B_${m[1]?.slice(0, 8)}`,
        size: bytes.length,
        url: `${base}/git/blobs/${m[1]}`,
        content,
        encoding: 'base64',
      },
    };
  }
  if (method === 'GET' && path === 'commits') {
    const from = r.query.get('sha') ?? '';
    const perPage = Math.min(100, Number(r.query.get('per_page') ?? 30));
    const list = (git.commit(from) ? git.log(from) : []).slice(0, perPage).map((c) => listedCommit(c, base));
    return { status: 200, body: list };
  }
  if (method === 'GET' && (m = path.match(/^commits\/([^/]+)$/))) {
    const c = git.commit(decodeURIComponent(m[1] ?? ''));
    return c ? { status: 200, body: listedCommit(c, base) } : notFound;
  }
  return null;
}

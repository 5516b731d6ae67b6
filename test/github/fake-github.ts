import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFakeGitStore, FAKE_APP, gitDataApi, type FakeGitStore } from './fake-git.js';

/**
 * GitHub's REST API faked at the HTTP level: the real Octokit (through Probot) talks to it, and it records
 * every call so tests assert what RepGen did on GitHub. State: comments, labels, check runs, and the repository's
 * git objects (test/github/fake-git.ts) behind both the contents API and the git data API (refs, commits, trees, blobs).
 * Anything it does not know answers 501, which fails the test that caused it.
 */
export interface RecordedCall {
  method: string;
  path: string;
  body: unknown;
  at: number;
}

export interface FakeComment {
  id: number;
  issue: number;
  body: string;
  html_url: string;
  user: { login: string; type: string };
  updated_at: string;
}

export interface FakeGithubOptions {
  /** login → role_name (admin, maintain, write, triage, read); unknown logins get 404. */
  roles?: Record<string, string>;
  /** Text of .github/repgen.yml; null/undefined = absent. */
  config?: string | null;
  /** Issues that exist: number → title/body. */
  issues?: Record<number, { title: string; body: string }>;
  /** Artificial latency per response, ms. @defaultValue 0 */
  latencyMs?: number;
  /** Pull requests that exist: number → description and head (GET /pulls/N). */
  pulls?: Record<number, { body: string | null; headSha: string; headRef: string }>;
  /** Files of commits the tests name but never make (the tested commit a branch starts from): sha → path → text. */
  commits?: Record<string, Record<string, string>>;
}

export interface FakeGithub {
  url: string;
  calls: RecordedCall[];
  comments: Map<number, FakeComment>;
  /** Issue number → labels added. */
  labels: Map<number, string[]>;
  checkRuns: Record<string, unknown>[];
  /** The repository's git objects and branches. */
  git: FakeGitStore;
  /** The pull requests opened through the fake (POST /pulls), as it holds them: body edits (PATCH) land here. */
  opened: { number: number; head: string; base: string; html_url: string; body: string | null; state: string }[];
  options: FakeGithubOptions;
  /** Deletes an issue: every later call about it (and its comments) answers 404. */
  deleteIssue: (n: number) => void;
  callsTo: (method: string, pathPattern: RegExp) => RecordedCall[];
  close: () => Promise<void>;
}

export async function startFakeGithub(options: FakeGithubOptions = {}): Promise<FakeGithub> {
  const calls: RecordedCall[] = [];
  const comments = new Map<number, FakeComment>();
  const labels = new Map<number, string[]>();
  const checkRuns: Record<string, unknown>[] = [];
  const deleted = new Set<number>();
  const git = createFakeGitStore(options.commits);
  const pulls: { number: number; head: string; base: string; html_url: string; body: string | null; state: string }[] = [];
  let nextId = 1000;
  let base = '';

  const send = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: ServerResponse) => send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString();
    const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    const method = req.method ?? 'GET';
    calls.push({ method, path, body, at: Date.now() });
    if (options.latencyMs) await new Promise((r) => setTimeout(r, options.latencyMs));
    let m: RegExpMatchArray | null;

    if (method === 'POST' && (m = path.match(/^\/app\/installations\/(\d+)\/access_tokens$/))) {
      return send(res, 201, {
        token: `ghs_fakeInstallationToken${m[1]}xxxxxxxxxxxx`,
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
        permissions: {},
        repository_selection: 'all',
      });
    }
    // The lost-run sweep: installation 1 holds every repository a comment was posted in.
    if (method === 'GET' && path === '/app') return send(res, 200, { id: 1, slug: 'repgen', name: 'RepGen', owner: { login: 'acme' } });
    if (method === 'GET' && path === '/app/installations') return send(res, 200, [{ id: 1, account: { login: 'Codertocat' } }]);
    if (method === 'GET' && path === '/installation/repositories') {
      const names = [...new Set([...comments.values()].map((c) => /github\.com\/([^/]+\/[^/]+)\/issues/.exec(c.html_url)?.[1] ?? ''))];
      const repositories = names.filter(Boolean).map((n) => ({ name: n.split('/')[1], full_name: n, owner: { login: n.split('/')[0] } }));
      return send(res, 200, { total_count: repositories.length, repositories });
    }
    if (method === 'GET' && (m = path.match(/^\/repos\/([^/]+)\/([^/]+)\/issues\/comments$/))) {
      const since = url.searchParams.get('since') ?? '';
      const prefix = `https://github.com/${m[1]}/${m[2]}/issues/`;
      return send(
        res,
        200,
        [...comments.values()].filter((c) => c.html_url.startsWith(prefix) && !deleted.has(c.issue) && c.updated_at >= since),
      );
    }
    if (method === 'GET' && (m = path.match(/^\/repos\/[^/]+\/[^/]+\/collaborators\/([^/]+)\/permission$/))) {
      const role = options.roles?.[m[1] ?? ''];
      if (!role) return notFound(res);
      const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role;
      return send(res, 200, { permission, role_name: role, user: { login: m[1] } });
    }
    if (method === 'GET' && (m = path.match(/^\/repos\/[^/]+\/[^/]+\/contents\/(.+)$/))) {
      const file =
        m[1] === '.github/repgen.yml' && options.config != null
          ? { content: options.config, sha: 'cfgsha' }
          : git.file(url.searchParams.get('ref') ?? '', m[1] ?? '');
      if (!file) return notFound(res);
      return send(res, 200, {
        type: 'file',
        path: m[1],
        sha: file.sha,
        encoding: 'base64',
        content: Buffer.from(file.content).toString('base64'),
      });
    }
    if ((m = path.match(/^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)(\/.*)?$/))) {
      const n = Number(m[3]);
      const rest = m[4] ?? '';
      if (deleted.has(n)) return send(res, 410, { message: 'This issue was deleted' });
      if (method === 'GET' && rest === '') {
        const issue = options.issues?.[n];
        if (!issue) return notFound(res);
        return send(res, 200, {
          number: n,
          title: issue.title,
          body: issue.body,
          html_url: `https://github.com/${m[1]}/${m[2]}/issues/${n}`,
          state: 'open',
          user: { login: 'reporter', type: 'User' },
        });
      }
      if (method === 'GET' && rest === '/comments') {
        return send(
          res,
          200,
          [...comments.values()].filter((c) => c.issue === n),
        );
      }
      if (method === 'POST' && rest === '/comments') {
        const id = nextId++;
        const c: FakeComment = {
          id,
          issue: n,
          body: String(body?.body ?? ''),
          html_url: `https://github.com/${m[1]}/${m[2]}/issues/${n}#issuecomment-${id}`,
          user: { login: 'repgen[bot]', type: 'Bot' },
          updated_at: new Date().toISOString(),
        };
        comments.set(id, c);
        return send(res, 201, c);
      }
      if (method === 'POST' && rest === '/reactions') return send(res, 201, { id: nextId++, content: body?.content });
      if (method === 'GET' && rest === '/labels')
        return send(
          res,
          200,
          (labels.get(n) ?? []).map((name) => ({ name })),
        );
      if (method === 'POST' && rest === '/labels') {
        const list = labels.get(n) ?? [];
        // As GitHub does: a label the issue already has is not added again.
        list.push(...((body?.labels as string[]) ?? []).filter((l) => !list.includes(l)));
        labels.set(n, list);
        return send(
          res,
          200,
          list.map((name) => ({ name })),
        );
      }
    }
    if ((m = path.match(/^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)(\/reactions)?$/))) {
      const c = comments.get(Number(m[1]));
      // Reactions go on users' comments too, which the fake never saw posted.
      if (m[2]) return send(res, 201, { id: nextId++, content: body?.content });
      if (method === 'PATCH') {
        if (!c || deleted.has(c.issue)) return notFound(res);
        c.body = String(body?.body ?? '');
        c.updated_at = new Date().toISOString();
        return send(res, 200, c);
      }
    }
    if (method === 'GET' && (m = path.match(/^\/repos\/[^/]+\/[^/]+\/commits\/([^/]+)\/check-runs$/))) {
      const name = url.searchParams.get('check_name');
      const runs = checkRuns.filter((c) => c.head_sha === m?.[1] && (!name || c.name === name));
      return send(res, 200, { total_count: runs.length, check_runs: runs });
    }
    if (method === 'POST' && /^\/repos\/[^/]+\/[^/]+\/check-runs$/.test(path)) {
      const run = { id: nextId++, ...body };
      checkRuns.push(run);
      return send(res, 201, run);
    }
    if (method === 'PATCH' && (m = path.match(/^\/repos\/[^/]+\/[^/]+\/check-runs\/(\d+)$/))) {
      const run = checkRuns.find((c) => c.id === Number(m?.[1]));
      if (!run) return notFound(res);
      Object.assign(run, body);
      return send(res, 200, run);
    }
    if (method === 'GET' && (m = path.match(/^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/))) {
      const pr = options.pulls?.[Number(m[3])];
      if (!pr) return notFound(res);
      return send(res, 200, {
        number: Number(m[3]),
        html_url: `https://github.com/${m[1]}/${m[2]}/pull/${m[3]}`,
        body: pr.body,
        state: 'open',
        head: { sha: pr.headSha, ref: pr.headRef },
      });
    }
    if ((m = path.match(/^\/repos\/([^/]+)\/([^/]+)\/(git\/.+|commits(?:\/[^/]+)?)$/))) {
      const answer = gitDataApi(git, { method, path: m[3] ?? '', body, query: url.searchParams, base: `${base}/repos/${m[1]}/${m[2]}` });
      if (answer) return send(res, answer.status, answer.body);
    }
    if (method === 'PUT' && (m = path.match(/^\/repos\/[^/]+\/[^/]+\/contents\/(.+)$/))) {
      // As GitHub does: one commit on the branch per write; an existing file needs its blob sha, and the current one.
      const branch = String(body?.branch);
      const head = git.commit(branch) ?? git.makeCommit(git.tree(new Map(), new Map()), [], 'root');
      const current = git.file(head.sha, m[1] ?? '');
      if (current && !body?.sha) return send(res, 422, { message: `Invalid request.\n\n"sha" wasn't supplied.` });
      if (current && body?.sha !== current.sha) return send(res, 409, { message: `${m[1]} does not match ${String(body?.sha)}` });
      const blob = git.blob(Buffer.from(String(body?.content ?? ''), 'base64'));
      const tree = git.tree(git.trees.get(head.tree) ?? new Map(), new Map([[m[1] ?? '', { mode: '100644', type: 'blob', sha: blob }]]));
      const commit = git.makeCommit(tree, [head.sha], String(body?.message ?? ''), FAKE_APP);
      git.refs.set(`refs/heads/${branch}`, commit.sha);
      return send(res, current ? 200 : 201, { content: { path: m[1], sha: blob }, commit: { sha: commit.sha, message: commit.message } });
    }
    if ((m = path.match(/^\/repos\/([^/]+)\/([^/]+)\/pulls$/))) {
      if (method === 'GET')
        return send(
          res,
          200,
          pulls.filter((p) => `${m?.[1]}:${p.head}` === url.searchParams.get('head')),
        );
      const number = nextId++;
      const pr = {
        number,
        head: String(body?.head),
        base: String(body?.base),
        html_url: `https://github.com/${m[1]}/${m[2]}/pull/${number}`,
        body: typeof body?.body === 'string' ? body.body : null,
        state: 'open',
      };
      pulls.push(pr);
      return send(res, 201, pr);
    }
    // Edits a PR this fake opened: its body (a person's edit, or RepGen's), as GitHub does, in place.
    if (method === 'PATCH' && (m = path.match(/^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)$/))) {
      const pr = pulls.find((p) => p.number === Number(m?.[1]));
      if (!pr) return notFound(res);
      if (typeof body?.body === 'string') pr.body = body.body;
      return send(res, 200, pr);
    }
    send(res, 501, { message: `fake GitHub does not implement ${method} ${path}` });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => send(res, 500, { message: err.message }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    calls,
    comments,
    labels,
    checkRuns,
    git,
    opened: pulls,
    options,
    deleteIssue: (n) => deleted.add(n),
    callsTo: (method, re) => calls.filter((c) => c.method === method && re.test(c.path)),
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The contents of a file on a branch of the fake (PR tests); undefined when absent. */
export function fakeFileOnBranch(gh: FakeGithub, branch: string, path: string): string | undefined {
  return gh.git.file(branch, path)?.content;
}

import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneAtRef } from '../../src/github/clone-repo.js';
import { CloneError, RefNotFoundError } from '../../src/github/errors.js';
import { makeGitRepo } from '../workers/harness.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/**
 * The clone against a real smart-HTTP git server (git http-backend behind node:http) that demands the
 * installation token the way GitHub does: Basic auth with user x-access-token. Proves the token travels
 * as a header and ends up nowhere on disk or in the URL.
 */
const TOKEN = 'ghs_testInstallationToken0123456789abcdef';
const GIT_EXEC = execFileSync('git', ['--exec-path']).toString().trim();

let server: Server;
let url: string;
let root: string;
let source: ReturnType<typeof makeGitRepo>;
let secondSha: string;
const seenAuth: (string | undefined)[] = [];
const seenUrls: string[] = [];

beforeAll(async () => {
  source = makeGitRepo({ 'a.py': 'print(1)\n' });
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'second'], { cwd: source.path });
  secondSha = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: source.path }).toString().trim();
  root = makeTempDir('repgen-git-http-');
  execFileSync('git', ['clone', '-q', '--bare', source.path, join(root, 'repo.git')]);
  server = createServer((req, res) => {
    seenAuth.push(req.headers.authorization);
    seenUrls.push(req.url ?? '');
    if (req.headers.authorization !== `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="GitHub"' }).end();
      return;
    }
    const u = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn(join(GIT_EXEC, 'git-http-backend'), [], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: u.pathname,
        QUERY_STRING: u.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        HTTP_GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      const lines = head.subarray(0, end).toString().split('\r\n');
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const [k, ...v] = line.split(':');
        if (!k) continue;
        if (k.toLowerCase() === 'status') status = Number(v.join(':').trim().split(' ')[0]);
        else headers[k] = v.join(':').trim();
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo.git`;
});

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  source?.cleanup();
  if (root) rmSync(root, { recursive: true, force: true });
});

function workDir(): string {
  return join(makeTempDir('repgen-clone-'), 'repo');
}

describe('cloneAtRef over smart HTTP', () => {
  it('checks out a branch with the token sent as an Authorization header only', async () => {
    const dir = workDir();
    const { sha } = await cloneAtRef({ url, ref: 'master', token: TOKEN, dir });
    expect(sha).toBe(secondSha);
    expect(readFileSync(join(dir, 'a.py'), 'utf8')).toBe('print(1)\n');
    expect(seenAuth.some((a) => a?.startsWith('Basic '))).toBe(true);
    expect(seenUrls.every((u) => !u.includes(TOKEN))).toBe(true);
    expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
    // Shallow: one commit of history.
    expect(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: dir }).toString().trim()).toBe('1');
  });

  it('with history (a bisection), fetches every commit of the ref and the tags, the token still only a header', async () => {
    const dir = workDir();
    const { sha } = await cloneAtRef({ url, ref: 'master', token: TOKEN, dir, history: true });
    expect(sha).toBe(secondSha);
    expect(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: dir }).toString().trim()).toBe('2');
    expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
  });

  it('checks out a commit SHA', async () => {
    const first = execFileSync('git', ['rev-parse', 'HEAD~1'], { cwd: source.path }).toString().trim();
    const { sha } = await cloneAtRef({ url, ref: first, token: TOKEN, dir: workDir() });
    expect(sha).toBe(first);
  });

  it('says the ref does not exist, as a RefNotFoundError', async () => {
    await expect(cloneAtRef({ url, ref: 'no-such-branch', token: TOKEN, dir: workDir() })).rejects.toBeInstanceOf(RefNotFoundError);
  });

  it('fails with a CloneError that never echoes the token when the server refuses it', async () => {
    const err = await cloneAtRef({ url, ref: 'master', token: 'ghs_wrongTokenWrongTokenWrongToken000', dir: workDir() }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CloneError);
    expect(String((err as Error).message)).not.toContain('ghs_wrongTokenWrongTokenWrongToken000');
  });
});

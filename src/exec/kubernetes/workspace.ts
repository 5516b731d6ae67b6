import { spawn } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How a Kubernetes run gets the project's checkout without the script ever holding a credential or a route
 * out. The worker (which already has the checkout, cloned with the installation token) offers the tree
 * once, under a random one-time token, on its workspace port. The Job's init container, and only it, gets
 * that token in its environment, fetches the tree as a tar stream into an emptyDir and exits; the script's
 * container mounts the emptyDir read-only and has neither the token (it was used up) nor the GitHub
 * token (it never entered the cluster's repro namespace). The NetworkPolicy lets repro pods reach only the
 * worker's workspace port, which answers nothing without a live token.
 */

export interface WorkspaceOffer {
  /** The URL the init container fetches (the server's public URL + the offer's id). */
  url: string;
  /** One-time bearer token; used up by the first authorised request. */
  token: string;
  /** Withdraws the offer (after the run, fetched or not). */
  release(): void;
}

export interface WorkspacePublisher {
  offer(hostPath: string): WorkspaceOffer;
}

interface Entry {
  dir: string;
  token: Buffer;
  expires: number;
}

/** Streams `tar` of a folder (no .git: the script needs the code, not the history). */
function tarStream(dir: string, res: ServerResponse): void {
  const child = spawn('tar', ['-C', dir, '--exclude=./.git', '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'ignore'] });
  res.writeHead(200, { 'content-type': 'application/x-tar', 'cache-control': 'no-store' });
  child.stdout.pipe(res);
  child.on('error', () => res.destroy());
  res.on('close', () => child.kill('SIGKILL'));
}

export interface WorkspaceServerOptions {
  /** URL repro pods reach the server at, e.g. `http://repgen-worker.repgen.svc:8472` (REPGEN_K8S_WORKSPACE_URL). */
  publicUrl: string;
  /** @defaultValue 8472 */
  port?: number;
  /** @defaultValue '0.0.0.0' */
  host?: string;
  /** How long an offer stays open when nobody fetches it. @defaultValue 1800000 */
  ttlMs?: number;
}

/** The worker's workspace port. One process, any number of runs; each offer is one tree for one fetch. */
export class WorkspaceServer implements WorkspacePublisher {
  private readonly entries = new Map<string, Entry>();
  private server: Server | null = null;
  private publicUrl: string;

  constructor(private readonly options: WorkspaceServerOptions) {
    this.publicUrl = options.publicUrl.replace(/\/+$/, '');
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(this.options.port ?? 8472, this.options.host ?? '0.0.0.0', () => resolve());
    });
    return this;
  }

  /** The bound port (tests listen on 0). */
  get port(): number {
    return (this.server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** Sets the public URL once the port is known (tests). */
  setPublicUrl(url: string): void {
    this.publicUrl = url.replace(/\/+$/, '');
  }

  offer(hostPath: string): WorkspaceOffer {
    const id = randomBytes(12).toString('hex');
    const token = randomBytes(32).toString('base64url');
    this.entries.set(id, { dir: hostPath, token: Buffer.from(token), expires: Date.now() + (this.options.ttlMs ?? 1_800_000) });
    return { url: `${this.publicUrl}/workspace/${id}`, token, release: () => this.entries.delete(id) };
  }

  async close(): Promise<void> {
    this.entries.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const m = /^\/workspace\/([0-9a-f]{24})$/.exec(req.url ?? '');
    const entry = m?.[1] ? this.entries.get(m[1]) : undefined;
    const given = Buffer.from(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
    // The same answer for an unknown id, a used-up token and a wrong one: nothing to probe.
    const ok =
      req.method === 'GET' &&
      entry &&
      entry.expires > Date.now() &&
      given.length === entry.token.length &&
      timingSafeEqual(given, entry.token);
    if (!ok || !m?.[1] || !entry) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('forbidden\n');
      return;
    }
    this.entries.delete(m[1]);
    tarStream(entry.dir, res);
  }
}

/**
 * The init container's program (python, from the run's ConfigMap): fetch the tar stream with the token from
 * its environment and unpack it into the workspace volume, refusing links, devices and paths that leave it.
 */
export const FETCH_WORKSPACE_PY = String.raw`
import os, sys, tarfile, urllib.request
dest = os.path.realpath(sys.argv[1])
url = os.environ["REPGEN_WORKSPACE_URL"]
token = os.environ.pop("REPGEN_WORKSPACE_TOKEN", "")
req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
n = 0
with urllib.request.urlopen(req, timeout=600) as r, tarfile.open(fileobj=r, mode="r|") as tar:
    for m in tar:
        target = os.path.realpath(os.path.join(dest, m.name))
        if not (m.isfile() or m.isdir()) or (target != dest and not target.startswith(dest + os.sep)):
            continue
        m.mode = (m.mode | 0o444) & 0o755
        m.uid = m.gid = 0
        m.uname = m.gname = ""
        tar.extract(m, dest, set_attrs=False) if not hasattr(tarfile, "data_filter") else tar.extract(m, dest, filter="data")
        n += 1
print("REPGEN_WORKSPACE fetched %d entries" % n)
`;

import { chmod, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';

/**
 * The only way out of an env build's network namespace: an HTTP proxy on a Unix socket that the sandbox sees, which
 * forwards to the package index's hosts and nothing else. uv (and a setup.py that fetches) reaches it through a
 * small forwarder inside the sandbox (FORWARDER_PY) that listens on the sandbox's own loopback. Plain `http://`
 * indexes get absolute-URI requests, `https://` ones a CONNECT tunnel; TLS stays end to end, the proxy sees hosts only.
 */
export interface IndexProxy {
  socketPath: string;
  /** host:port pairs refused so far (what a build tried to reach besides the index). */
  refused: string[];
  close(): Promise<void>;
}

/** `host:port` an index URL's files come from (PyPI serves files from a second host). */
export function allowedHostsFor(urls: string[]): string[] {
  const out = new Set<string>();
  for (const raw of urls) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      continue;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    out.add(`${u.hostname}:${port}`);
    if (u.hostname === 'pypi.org') out.add('files.pythonhosted.org:443');
  }
  return [...out];
}

function hostKey(host: string, port: string | number): string {
  return `${host.replace(/^\[|\]$/g, '')}:${port}`;
}

/** The longest path a Unix socket may have (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

export async function startIndexProxy(socketPath: string, allowed: string[]): Promise<IndexProxy> {
  // A Unix socket's path holds at most 107 bytes; a longer one is cut by the kernel and the socket made elsewhere.
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH)
    throw new Error(
      `the index proxy's socket path ${socketPath} is longer than ${MAX_SOCKET_PATH} bytes (a Unix socket's limit): ` +
        'put the env cache (REPGEN_ENV_CACHE) on a shorter path',
    );
  const allow = new Set(allowed);
  const refused: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end();
      return;
    }
    const key = hostKey(target.hostname, target.port || (target.protocol === 'https:' ? '443' : '80'));
    if (target.protocol !== 'http:' || !allow.has(key)) {
      refused.push(key);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`repgen: ${key} is not the package index\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = httpRequest(target, { method: req.method, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    req.pipe(upstream);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    const key = m ? hostKey(m[1] as string, m[2] as string) : String(req.url);
    if (!m || !allow.has(key)) {
      refused.push(key);
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    // No Nagle on the tunnel: TLS handshakes and small requests would wait for delayed ACKs.
    const up = connect({ port: Number(m[2]), host: m[1] as string, noDelay: true }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await rm(socketPath, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  // The sandbox's uid connects to it; the folder it lies in is already private to that uid and this process.
  await chmod(socketPath, 0o666);
  return {
    socketPath,
    refused,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(socketPath, { force: true });
    },
  };
}

/**
 * Runs inside the sandbox as its first process (`python -I -S -c FORWARDER_PY SOCKET CMD...`): listens on the
 * sandbox's loopback, pipes each connection to the proxy socket, and runs CMD with the proxy variables set.
 * RepGen's own code, run by the base interpreter in isolated mode; nothing of the project is imported.
 */
export const FORWARDER_PY = `
import os, socket, subprocess, sys, threading
path, cmd = sys.argv[1], sys.argv[2:]
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(64)
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve():
    while True:
        c, _ = srv.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        u = socket.socket(socket.AF_UNIX)
        try:
            u.connect(path)
        except OSError:
            c.close()
            continue
        threading.Thread(target=pump, args=(c, u), daemon=True).start()
        threading.Thread(target=pump, args=(u, c), daemon=True).start()
threading.Thread(target=serve, daemon=True).start()
proxy = "http://127.0.0.1:%d" % srv.getsockname()[1]
env = dict(os.environ)
for k in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
    env[k] = proxy
env["NO_PROXY"] = env["no_proxy"] = ""
sys.exit(subprocess.call(cmd, env=env))
`;

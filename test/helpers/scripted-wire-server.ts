import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The transport shared by the two wire-format fakes (anthropic-wire-server.ts, openai-wire-server.ts):
 * a real HTTP server on 127.0.0.1 that answers each request with the next scripted step and records
 * what it received. Each format module turns its own response shapes into a {@link WireReply}.
 */

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages`. */
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The raw body. */
  rawBody: string;
  /** The body parsed as JSON; `undefined` when it is not JSON. */
  body: unknown;
  /** 0-based index of this request among all the server received. */
  index: number;
}

/** What to write back: status, headers and a body, optionally after a delay. */
export interface WireReply {
  status: number;
  headers?: Record<string, string>;
  body: string;
  /** Wait this long before answering (the client's timeout or abort can fire meanwhile). */
  delayMs?: number;
  /** Never answer; the socket stays open until the client gives up or the server closes. */
  hang?: boolean;
}

export interface ScriptedServer {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  /** Every request received, in order (including those answered with "exhausted"). */
  requests: RecordedRequest[];
  /** How many scripted responses have not been used yet. */
  remaining(): number;
  /** Messages of the requests that arrived after the script ran out (empty when all went to plan). */
  exhaustedErrors: string[];
  /** Stops the server and drops open connections (hanging requests included). */
  close(): Promise<void>;
}

export interface ScriptedServerOptions<R> {
  /** Name used in messages, e.g. `anthropic`. */
  name: string;
  /** The one route served; anything else gets a 404 in the format's own error shape. */
  route: { method: string; path: string };
  steps: R[];
  /** Turns one scripted step into a reply (may call the step if it is a function of the request). */
  toReply: (step: R, request: RecordedRequest) => Promise<WireReply>;
  /** The error reply for a request the script did not foresee (wrong route, script exhausted). */
  errorReply: (status: number, message: string) => WireReply;
}

/** Starts the server; resolves once it listens. */
export async function startScriptedServer<R>(options: ScriptedServerOptions<R>): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const exhaustedErrors: string[] = [];
  const queue = [...options.steps];
  const total = queue.length;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
    }
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers,
      rawBody,
      body: parseJson(rawBody),
      index: requests.length,
    };
    requests.push(recorded);

    const pathOnly = recorded.path.split('?')[0];
    if (recorded.method !== options.route.method || pathOnly !== options.route.path) {
      await write(
        res,
        options.errorReply(
          404,
          `${options.name} fake serves only ${options.route.method} ${options.route.path}, got ${recorded.method} ${recorded.path}`,
        ),
      );
      return;
    }
    const step = queue.shift();
    if (step === undefined) {
      const message = `scripted responses exhausted: the ${options.name} fake had ${total} response(s) and got request #${recorded.index + 1}`;
      exhaustedErrors.push(message);
      // `x-should-retry: false` is the real Anthropic header that tells clients not to retry, so the
      // test fails at once with this message instead of retrying into more "exhausted" answers.
      const reply = options.errorReply(500, message);
      await write(res, { ...reply, headers: { ...reply.headers, 'x-should-retry': 'false' } });
      return;
    }
    let reply: WireReply;
    try {
      reply = await options.toReply(step, recorded);
    } catch (err) {
      reply = options.errorReply(500, `${options.name} fake: the scripted step threw: ${String(err)}`);
    }
    await write(res, reply);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake server failure: ${String(err)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    exhaustedErrors,
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function write(res: ServerResponse, reply: WireReply): Promise<void> {
  if (reply.hang) {
    // Hold the socket open; close() or the client's abort ends it.
    await new Promise<void>((resolve) => res.once('close', () => resolve()));
    return;
  }
  if (reply.delayMs && reply.delayMs > 0) {
    const closed = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), reply.delayMs);
      res.once('close', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (closed) return;
  }
  if (res.destroyed) return;
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(reply.body);
}

/** Rough token count (4 characters a token), deterministic so tests can compute expected costs. */
export function approxTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

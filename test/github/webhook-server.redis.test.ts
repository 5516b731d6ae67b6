import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAppEnv } from '../../src/config/app-env.js';
import type { Logger } from '../../src/log.js';
import { startAppServer, type AppServerHandle } from '../../workers/app-server.js';
import { startFakeGithub, type FakeGithub } from './fake-github.js';
import { commentPayload, sign, testPrivateKey } from './webhook-fixtures.js';

/** Hostile requests against the real `repgen serve` server: each gets a clean 4xx, none costs memory or a log of its body. */
const SECRET = 'webhook-secret-for-hostile-tests';
const PREFIX = `repgen-test-hook-${process.pid}`;
const MARKER = 'BODY-MARKER-never-logged';

let gh: FakeGithub;
let app: AppServerHandle;
const logged: string[] = [];
const log: Logger = {
  debug: (o, m) => logged.push(`${m} ${JSON.stringify(o)}`),
  info: (o, m) => logged.push(`${m} ${JSON.stringify(o)}`),
  warn: (o, m) => logged.push(`${m} ${JSON.stringify(o)}`),
  error: (o, m) => logged.push(`${m} ${JSON.stringify(o)}`),
};

beforeAll(async () => {
  gh = await startFakeGithub({ roles: { Codertocat: 'admin' } });
  const env = readAppEnv({
    APP_ID: '1',
    PRIVATE_KEY: testPrivateKey(),
    WEBHOOK_SECRET: SECRET,
    REPGEN_QUEUE_PREFIX: PREFIX,
    LOG_LEVEL: 'fatal',
  });
  app = await startAppServer(env, { log, baseUrl: gh.url, port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
  await gh?.close();
});

interface Sent {
  status: number;
  body: string;
  sentBytes: number;
}

/**
 * Streams `totalBytes` of `chunk` repeated, honouring backpressure (a bounded loop, never the whole body in
 * memory), and stops as soon as the server answers. `length: false` sends it chunked, without a length.
 */
function stream(headers: Record<string, string>, totalBytes: number, opts: { length: boolean; chunk?: Buffer }): Promise<Sent> {
  const url = new URL(app.url);
  const chunk = opts.chunk ?? Buffer.alloc(1024 * 1024, 'a');
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { ...headers, ...(opts.length ? { 'content-length': String(totalBytes) } : {}) },
      },
      (res) => {
        answered = true;
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, sentBytes }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, body, sentBytes }));
      },
    );
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const pump = (): void => {
      while (!answered && sentBytes < totalBytes) {
        const piece = totalBytes - sentBytes >= chunk.length ? chunk : chunk.subarray(0, totalBytes - sentBytes);
        sentBytes += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    pump();
  });
}

function signedHeaders(body: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-github-event': 'issue_comment',
    'x-github-delivery': randomUUID(),
    'x-hub-signature-256': sign(SECRET, body),
    ...extra,
  };
}

async function send(body: string, headers: Record<string, string>, method = 'POST'): Promise<number> {
  const res = await fetch(app.url, { method, headers, ...(method === 'GET' ? {} : { body }) });
  await res.text();
  return res.status;
}

async function peakRssDuring<T>(work: () => Promise<T>): Promise<{ result: T; growthMb: number }> {
  global.gc?.();
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growthMb: (peak - base) / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

describe('webhook server: hostile requests', () => {
  it('a 200 MB unsigned body with its length declared gets 413 before it is read; RSS grows < 50 MB', async () => {
    const headers = { 'content-type': 'application/json', 'x-github-event': 'issues', 'x-github-delivery': randomUUID() };
    const { result, growthMb } = await peakRssDuring(() => stream(headers, 200 * 1024 * 1024, { length: true }));
    expect(result.status).toBe(413);
    expect(growthMb).toBeLessThan(50);
  });

  it('a 200 MB chunked body (no length) with a forged signature gets 413 at the 25 MB cap; RSS grows < 50 MB', async () => {
    const headers = {
      'content-type': 'application/json',
      'x-github-event': 'issues',
      'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${'1'.repeat(64)}`,
    };
    const { result, growthMb } = await peakRssDuring(() => stream(headers, 200 * 1024 * 1024, { length: false }));
    expect(result.status).toBe(413);
    expect(result.sentBytes).toBeLessThan(200 * 1024 * 1024);
    expect(growthMb).toBeLessThan(50);
  });

  it.each([
    ['JSON null, signed', 400, 'null', {}],
    ['a JSON array, signed', 400, '[1,2]', {}],
    ['a JSON string, signed', 400, '"x"', {}],
    ['not JSON, signed', 400, `{${MARKER}`, {}],
    ['no event header', 400, '{}', { 'x-github-event': '' }],
    ['a bad event header', 400, '{}', { 'x-github-event': '../etc' }],
    ['no delivery id', 400, '{}', { 'x-github-delivery': '' }],
    ['no signature', 401, `{"m":"${MARKER}"}`, { 'x-hub-signature-256': '' }],
    ['a wrong signature', 401, `{"m":"${MARKER}"}`, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }],
    ['a sha1 signature only', 401, `{"m":"${MARKER}"}`, { 'x-hub-signature-256': '', 'x-hub-signature': 'sha1=abc' }],
    ['a text/plain body', 415, '{}', { 'content-type': 'text/plain' }],
  ] as const)('%s → %i, not 500', async (_what, status, body, extra) => {
    const headers = Object.fromEntries(Object.entries(signedHeaders(body, extra)).filter(([, v]) => v !== ''));
    expect(await send(body, headers)).toBe(status);
  });

  it('GET on the webhook path is 405, any other path 404, /healthz 200', async () => {
    expect(await send('', {}, 'GET')).toBe(405);
    expect((await fetch(app.url.replace(/\/api\/github\/webhooks$/, '/elsewhere'))).status).toBe(404);
    expect((await fetch(app.url.replace(/\/api\/github\/webhooks$/, '/healthz'))).status).toBe(200);
  });

  it('a signed, well-formed comment is accepted (200) and no refused body ever reached the log', async () => {
    const body = JSON.stringify(commentPayload('just a comment, no command', { issueNumber: 5, sender: { login: 'Codertocat' } }));
    expect(await send(body, signedHeaders(body))).toBe(200);
    expect(logged.some((l) => l.includes('webhook refused'))).toBe(true);
    expect(logged.filter((l) => l.includes(MARKER))).toEqual([]);
  });
});

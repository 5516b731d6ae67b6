import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** GitHub caps its own webhook payloads at 25 MB; nothing bigger is a real delivery. */
export const MAX_WEBHOOK_BYTES = 25 * 1024 * 1024;

/** A delivery that passed every check: size, headers, signature, JSON object. */
export interface VerifiedWebhook {
  id: string;
  name: string;
  payload: Record<string, unknown>;
}

/** Why a request was refused: the HTTP status and a one-line reason (never the body). */
export interface WebhookRefusal {
  status: 400 | 401 | 405 | 411 | 413 | 415;
  reason: string;
}

const EVENT = /^[a-z_]{1,64}$/;
const DELIVERY = /^[A-Za-z0-9-]{1,100}$/;
const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

/**
 * Reads one webhook request in the order that keeps an attacker's bytes cheap: the size (declared, then
 * counted while streaming, stopping at the cap), the headers, then the HMAC over the raw bytes, and only
 * then JSON. Nothing is logged here, and an unverified body is never parsed: a refusal carries no body text.
 */
export async function readWebhook(
  req: IncomingMessage,
  secret: string,
  maxBytes = MAX_WEBHOOK_BYTES,
): Promise<VerifiedWebhook | WebhookRefusal> {
  if (req.method !== 'POST') return { status: 405, reason: 'webhooks are POSTed' };
  const declared = req.headers['content-length'];
  if (declared !== undefined && !/^\d{1,15}$/.test(declared)) return { status: 400, reason: 'bad content-length' };
  if (declared !== undefined && Number(declared) > maxBytes) return { status: 413, reason: `body over ${maxBytes} bytes` };
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') return { status: 415, reason: 'content-type must be application/json' };
  const name = header(req, 'x-github-event');
  const id = header(req, 'x-github-delivery');
  const signature = header(req, 'x-hub-signature-256');
  if (!name || !EVENT.test(name)) return { status: 400, reason: 'missing or bad x-github-event' };
  if (!id || !DELIVERY.test(id)) return { status: 400, reason: 'missing or bad x-github-delivery' };
  if (!signature || !SIGNATURE.test(signature)) return { status: 401, reason: 'missing or malformed x-hub-signature-256' };
  const body = await readCapped(req, maxBytes);
  if (body === null) return { status: 413, reason: `body over ${maxBytes} bytes` };
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  if (!timingSafeEqual(expected, Buffer.from(signature))) return { status: 401, reason: 'signature does not match' };
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    return { status: 400, reason: 'body is not JSON' };
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return { status: 400, reason: 'body is not a JSON object' };
  return { id, name, payload: payload as Record<string, unknown> };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Collects the body up to `maxBytes`; past it, stops reading and returns null at once (the caller answers
 * 413 and closes the connection), so a 200 MB upload costs at most the cap in memory.
 */
function readCapped(req: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (value: Buffer | null): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        chunks.length = 0;
        req.pause();
        done(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => done(Buffer.concat(chunks, size));
    const onError = (err: Error): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

import { z } from 'zod';

/** The frames a fork server (fork-server.ts) writes on its stdout, and the reader that splits them. */

/** Largest frame payload the server sends (its reads are 64 KiB); anything larger is not its. */
export const MAX_FRAME_BYTES = 1 << 20;

export const ReadyFrame = z.object({
  cpuMs: z.number().min(0),
  threads: z.number().int().min(1),
  /** SERVER_IMPORTS that failed ("module: Error: message"): such a server is half-imported and never forks a run. */
  failed: z.array(z.string()).default([]),
});
export type ReadyFrame = z.infer<typeof ReadyFrame>;

export const EndFrame = z.object({
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  cpuMs: z.number().min(0),
  maxRssKb: z.number().min(0),
  clean: z.boolean(),
});
export type EndFrame = z.infer<typeof EndFrame>;

/**
 * What a `{"preload": [...]}` message did: the modules it imported anew, those it skipped (already imported, or of
 * the standard library), the first that failed, its threads after, what the imports printed (base64).
 */
export const PreloadFrame = z.object({
  loaded: z.array(z.string()),
  skipped: z.array(z.string()),
  failed: z.object({ module: z.string(), error: z.string() }).nullable(),
  threads: z.number().int().min(1),
  stdout: z.string().base64(),
  stderr: z.string().base64(),
});
export type PreloadFrame = z.infer<typeof PreloadFrame>;

export type Frame =
  | { kind: 'ready'; ready: ReadyFrame }
  | { kind: 'preload'; preload: PreloadFrame }
  | { kind: 'stdout' | 'stderr'; data: Buffer }
  | { kind: 'end'; end: EndFrame }
  | { kind: 'started' }
  | { kind: 'bad'; why: string };

/**
 * What the server writes just before its ready frame. Whatever came before it on stdout (a `sitecustomize` of the
 * workspace that prints when the interpreter starts) is not the server's and is skipped; after it, only frames.
 */
export const READY_SYNC = Buffer.from('\0REPGEN-FORK-SERVER\0', 'latin1');

/** Splits the server's stdout into frames. Pure: push bytes in, frames come out; after a `bad` frame nothing more. */
export function createFrameReader(): { push(chunk: Buffer): Frame[] } {
  let pending: Buffer = Buffer.alloc(0);
  let broken = false;
  let synced = false;
  return {
    push(chunk: Buffer): Frame[] {
      if (broken) return [];
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      if (!synced) {
        const at = pending.indexOf(READY_SYNC);
        if (at < 0) {
          // Keep only what could be the start of the marker.
          pending = pending.subarray(Math.max(0, pending.length - READY_SYNC.length + 1));
          return [];
        }
        synced = true;
        pending = pending.subarray(at + READY_SYNC.length);
      }
      const frames: Frame[] = [];
      while (pending.length >= 5) {
        const kind = String.fromCharCode(pending[0]!);
        const len = pending.readUInt32BE(1);
        if (len > MAX_FRAME_BYTES || !'ROEXPS'.includes(kind)) {
          broken = true;
          frames.push({ kind: 'bad', why: `not a frame of the fork server (kind ${JSON.stringify(kind)}, ${len} bytes)` });
          return frames;
        }
        if (pending.length < 5 + len) break;
        const payload = pending.subarray(5, 5 + len);
        pending = pending.subarray(5 + len);
        if (kind === 'O' || kind === 'E') {
          frames.push({ kind: kind === 'O' ? 'stdout' : 'stderr', data: Buffer.from(payload) });
          continue;
        }
        if (kind === 'S') {
          frames.push({ kind: 'started' });
          continue;
        }
        const parsed = controlFrame(kind, payload);
        if (parsed === null) {
          broken = true;
          frames.push({ kind: 'bad', why: `a malformed ${kind} frame of the fork server` });
          return frames;
        }
        frames.push(parsed);
      }
      return frames;
    },
  };
}

/** An `R`, `X` or `P` frame's payload, checked; null when malformed. */
function controlFrame(kind: string, payload: Buffer): Frame | null {
  if (kind === 'R') {
    const ready = parseJson(payload, ReadyFrame);
    return ready && { kind: 'ready', ready };
  }
  if (kind === 'X') {
    const end = parseJson(payload, EndFrame);
    return end && { kind: 'end', end };
  }
  const preload = parseJson(payload, PreloadFrame);
  return preload && { kind: 'preload', preload };
}

function parseJson<T>(payload: Buffer, schema: z.ZodType<T>): T | null {
  try {
    const r = schema.safeParse(JSON.parse(payload.toString('utf8')));
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}

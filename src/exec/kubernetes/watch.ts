import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../../log.js';
import { httpStatus } from './retry.js';

/**
 * A list-then-watch loop, the informer pattern: list to learn the current objects and a resourceVersion, watch
 * from there, and when the server ends the stream (its timeout, a proxy) watch again from the last version seen.
 * When the server says 410 Gone (that version was compacted away, as HTTP status or as an ERROR event) the
 * loop lists again, so no transition is lost. Objects are handed over as the API's JSON.
 */

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC';

export interface ListResult {
  items: unknown[];
  resourceVersion: string | undefined;
}

export interface ResumableWatchOptions {
  kubeConfig: KubeConfig;
  /** Collection path, e.g. `/api/v1/namespaces/ns/pods`. */
  path: string;
  /** labelSelector / fieldSelector. */
  query: Record<string, string>;
  /** Lists the collection with the same selector (through the typed API, with retries). */
  list: () => Promise<ListResult>;
  /** Called for every object seen: `SYNC` for objects of a (re)list. */
  onEvent: (type: WatchEventType, object: Record<string, unknown>) => void;
  /** Called when the loop stops for good on an error it cannot resume from. */
  onFatal: (err: unknown) => void;
  log?: Logger;
  /** Server-side timeout of one watch request. @defaultValue 60 */
  timeoutSeconds?: number;
}

interface WatchSession {
  /** Resolves when the stream ended: `gone` after a 410, `error` after a broken connection. */
  ended: Promise<{ gone: boolean; error?: unknown }>;
  abort: () => void;
}

/** Starts the loop; returns a function that stops it (idempotent). */
export function startResumableWatch(opts: ResumableWatchOptions): () => void {
  let stopped = false;
  let current: WatchSession | undefined;
  const stopSignal = new AbortController();

  async function watchOnce(resourceVersion: string | undefined): Promise<{ session: WatchSession; lastVersion: () => string | undefined }> {
    const { Watch } = await import('@kubernetes/client-node');
    let last = resourceVersion;
    let gone = false;
    let resolveEnded!: (v: { gone: boolean; error?: unknown }) => void;
    const ended = new Promise<{ gone: boolean; error?: unknown }>((r) => {
      resolveEnded = r;
    });
    const query: Record<string, string | number | boolean> = {
      ...opts.query,
      allowWatchBookmarks: true,
      timeoutSeconds: opts.timeoutSeconds ?? 60,
    };
    if (resourceVersion) query.resourceVersion = resourceVersion;
    const watch = new Watch(opts.kubeConfig);
    // client-node aborts a watch after 30 s without data; a pod that runs quietly for minutes is normal, so the
    // server's own timeoutSeconds (a clean end, resumed below) must always come first.
    (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = ((opts.timeoutSeconds ?? 60) + 15) * 1000;
    const controller = await watch.watch(
      opts.path,
      query,
      (type: string, object: Record<string, unknown>) => {
        const version = (object.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
        if (type === 'ERROR') {
          if ((object as { code?: number }).code === 410) gone = true;
          return;
        }
        if (version) last = version;
        if (type === 'BOOKMARK') return;
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') opts.onEvent(type, object);
      },
      (err: unknown) =>
        resolveEnded(httpStatus(err) === 410 ? { gone: true } : gone ? { gone: true } : { gone: false, error: err ?? undefined }),
    );
    return { session: { ended, abort: () => controller.abort() }, lastVersion: () => last };
  }

  async function loop(): Promise<void> {
    let version: string | undefined;
    let needList = true;
    let failures = 0;
    while (!stopped) {
      try {
        if (needList) {
          const listed = await opts.list();
          for (const item of listed.items) opts.onEvent('SYNC', item as Record<string, unknown>);
          version = listed.resourceVersion;
          needList = false;
        }
        const { session, lastVersion } = await watchOnce(version);
        current = session;
        if (stopped) session.abort();
        const result = await session.ended;
        version = lastVersion();
        if (stopped) return;
        if (result.gone) {
          opts.log?.info({ path: opts.path }, 'watch expired (410 Gone), listing again');
          needList = true;
          continue;
        }
        failures = 0;
        // An idle connection the client gave up on is not a failure: watch again from the last version.
        if (result.error && (result.error as Error).name !== 'TimeoutError') throw result.error;
      } catch (err) {
        if (stopped) return;
        failures += 1;
        const status = httpStatus(err);
        // 4xx other than 410/429 will not heal by retrying (RBAC, a deleted namespace).
        if (failures > 8 || (status !== undefined && status >= 400 && status < 500 && status !== 410 && status !== 429)) {
          opts.onFatal(err);
          return;
        }
        if (status === 410) needList = true;
        opts.log?.warn({ path: opts.path, status, failures }, 'watch failed, resuming');
        await sleep(Math.min(5000, 100 * 2 ** failures), undefined, { signal: stopSignal.signal }).catch(() => undefined);
      }
    }
  }

  void loop();
  return () => {
    if (stopped) return;
    stopped = true;
    stopSignal.abort();
    current?.abort();
  };
}

import wt from 'node:worker_threads';
import zlib from 'node:zlib';

/**
 * @kubernetes/client-node 2.x talks HTTP through undici 8, which is written for Node ≥ 22.19 and fails to
 * load on the Node 20 that RepGen supports (package.json engines). Three Node-22 APIs are missing there; this
 * module supplies them before the client is loaded (import it first). On Node ≥ 22 it changes nothing.
 * - Promise.withResolvers: the standard ES2024 function, polyfilled to spec.
 * - worker_threads.markAsUncloneable: only guards against posting undici objects to workers; a no-op is safe.
 * - zlib.createZstdDecompress: only used for `Content-Encoding: zstd`, which the API server never sends.
 */
const promise = Promise as PromiseConstructor & { withResolvers?: unknown };
if (typeof promise.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor) {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const p = new this<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise: p, resolve, reject };
    },
  });
}
const workers = wt as typeof wt & { markAsUncloneable?: unknown };
if (typeof workers.markAsUncloneable !== 'function') workers.markAsUncloneable = () => undefined;
const z = zlib as typeof zlib & { createZstdDecompress?: unknown };
if (typeof z.createZstdDecompress !== 'function') {
  z.createZstdDecompress = () => {
    throw new Error('zstd content encoding is not supported on this Node version');
  };
}

// The Kubernetes executor's options and its small helpers: the capped log sink, run ids, the default cluster access.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { BatchV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../../log.js';
import type { KubernetesConfig } from './config.js';
import type { RetryOptions } from './retry.js';
import type { WorkspacePublisher } from './workspace.js';

export interface KubernetesExecutorOptions {
  config: KubernetesConfig;
  /** Cluster access. @defaultValue KubeConfig.loadFromDefault() (KUBECONFIG, ~/.kube/config, or in-cluster) */
  kubeConfig?: KubeConfig;
  log?: Logger;
  /** Environment `envAllowlist` reads from. @defaultValue process.env */
  hostEnv?: NodeJS.ProcessEnv;
  /** Backoff of API calls. @defaultValue { retries: 5, baseDelayMs: 200, maxDelayMs: 5000 } */
  retry?: RetryOptions;
  /** How often time-based rules (schedule wait, pull grace) are checked. @defaultValue 1000 */
  tickMs?: number;
  /** How long to wait for the log stream to end once the container has. @defaultValue 10000 */
  logGraceMs?: number;
  /** Server-side timeout of each watch request; the watch resumes from its last resourceVersion. @defaultValue 60 */
  watchTimeoutSeconds?: number;
  /** Source of run ids (tests). @defaultValue 10 random hex characters */
  newRunId?: () => string;
  /** Offers a run's workspace to its init container once (the worker's WorkspaceServer); without it a workspace run is refused. */
  workspaceServer?: WorkspacePublisher;
}

/** A Writable that keeps the first `limit` bytes and resolves `ended` when its source ends. */
export class CappedSink extends Writable {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  readonly ended: Promise<void>;
  constructor(private readonly limit: number) {
    super();
    this.ended = new Promise((resolve) => this.once('finish', () => resolve()));
    // client-node's Log pipes the response into us without an error handler on its side; aborting the request
    // would then throw from the stream. Handling it here ends the sink instead.
    this.on('pipe', (source: NodeJS.ReadableStream) => {
      source.on('error', () => {
        // Unpiped first: a source that still emits data after its error would write after our end.
        source.unpipe(this);
        this.end();
      });
    });
    // What such a source wrote in flight after the end is dropped, never thrown (an uncaught error ends a worker).
    this.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ERR_STREAM_WRITE_AFTER_END') throw err;
    });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    const room = this.limit - this.size;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.size += part.length;
    }
    cb();
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export function newRunId(): string {
  return randomBytes(5).toString('hex');
}

export function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

/** What every adapter talking to the cluster sets up the same way: its API clients, logger, backoff and tick. */
export function clusterClients(options: Pick<KubernetesExecutorOptions, 'kubeConfig' | 'log' | 'retry' | 'tickMs'>) {
  const kc = options.kubeConfig ?? defaultKubeConfig();
  return {
    log: options.log ?? silentLogger,
    batch: kc.makeApiClient(BatchV1Api),
    core: kc.makeApiClient(CoreV1Api),
    retry: options.retry ?? {},
    tickMs: options.tickMs ?? 1000,
  };
}

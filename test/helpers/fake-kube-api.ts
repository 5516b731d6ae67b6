import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { waitFor } from './poll.js';
import { makeTempDir } from './temp-dir.js';

/**
 * A fake Kubernetes API server for the executor's tests, speaking the real JSON over HTTP: ConfigMaps, batch/v1
 * Jobs and Pods (create, get, list, replace, delete), watch streams with resourceVersions, bookmarks-free
 * history and 410 Gone, and the pod log endpoint (follow, limitBytes). Behind it sit a tiny job controller
 * (pods from the template, activeDeadlineSeconds, Complete/Failed conditions), scheduler (GPU capacity, node
 * selector) and kubelet that really runs the container's command with /usr/bin/python3 in temp dirs standing
 * in for the volumes, and OOM-kills it when its memory passes the container's limit, as a cgroup would.
 */

type Kind = 'configmaps' | 'jobs' | 'pods';
type Obj = Record<string, any>;

export interface FakeKubeOptions {
  /** GPUs on the one fake node; pods asking for more stay Unschedulable. @defaultValue 0 */
  gpus?: number;
  /** Images whose pull fails (ErrImagePull, then ImagePullBackOff). @defaultValue none */
  pullFails?: (image: string) => boolean;
  /** Time between scheduling and the container start ("image pull"). @defaultValue 0 */
  startDelayMs?: number;
  /** Interpreter standing in for the image's `python`. @defaultValue '/usr/bin/python3' */
  python?: string;
  /** PersistentVolumeClaims by name: the host folder standing in for each one's volume (shared by every pod, never removed). @defaultValue {} */
  claims?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
}

interface Fault {
  method: string;
  path: RegExp;
  status: number;
  times: number;
  headers: Record<string, string>;
  /** Do the request, then answer the fault anyway (a response lost on the way back). */
  land: boolean;
}

interface Watcher {
  kind: Kind;
  ns: string;
  matches: (o: Obj) => boolean;
  res: ServerResponse;
  rv: number;
}

interface Running {
  child: ChildProcess;
  dirs: string[];
  log: Buffer[];
  followers: Set<ServerResponse>;
  memTimer?: NodeJS.Timeout;
  oomKilled: boolean;
  exited: boolean;
}

const clone = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;
const nowIso = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

function status(code: number, reason: string, message: string): Obj {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

const LIST_KIND: Record<Kind, { kind: string; apiVersion: string }> = {
  configmaps: { kind: 'ConfigMapList', apiVersion: 'v1' },
  pods: { kind: 'PodList', apiVersion: 'v1' },
  jobs: { kind: 'JobList', apiVersion: 'batch/v1' },
};

function parseSelector(sel: string | undefined, get: (o: Obj, key: string) => string | undefined): (o: Obj) => boolean {
  if (!sel) return () => true;
  const terms = sel.split(',').map((t) => {
    const neg = t.includes('!=');
    const [k, v] = t.split(/!=|==|=/) as [string, string];
    return { k: k.trim(), v: (v ?? '').trim(), neg };
  });
  return (o) => terms.every(({ k, v, neg }) => (get(o, k) === v) !== neg);
}

function quantityToBytes(q: string): number {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G)?$/.exec(q);
  if (!m) return Number.POSITIVE_INFINITY;
  const mult: Record<string, number> = { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, k: 1e3, M: 1e6, G: 1e9 };
  return Number(m[1]) * (m[2] ? mult[m[2]]! : 1);
}

function descendants(pid: number): number[] {
  const out: number[] = [];
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    out.push(p);
    try {
      for (const t of readdirSync(`/proc/${p}/task`)) {
        const kids = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim();
        if (kids) stack.push(...kids.split(/\s+/).map(Number));
      }
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

function rssBytes(pids: number[]): number {
  let total = 0;
  for (const p of pids) {
    try {
      total += Number(readFileSync(`/proc/${p}/statm`, 'utf8').split(' ')[1]) * 4096;
    } catch {
      /* exited meanwhile */
    }
  }
  return total;
}

function killTree(pid: number | undefined): void {
  if (!pid) return;
  for (const p of descendants(pid).reverse()) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

export class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  /** Every object created through the API, as it was sent (kept after deletion). */
  readonly created: Array<{ kind: string; object: Obj }> = [];
  private server!: Server;
  private rv = 1;
  private compactedRv = 0;
  private http410Watches = 0;
  private readonly store: Record<Kind, Map<string, Obj>> = { configmaps: new Map(), jobs: new Map(), pods: new Map() };
  private readonly history: Array<{ kind: Kind; ns: string; type: string; object: Obj; rv: number }> = [];
  private readonly watchers = new Set<Watcher>();
  private readonly faults: Fault[] = [];
  private readonly running = new Map<string, Running>();
  private readonly podVolumes = new Map<string, Map<string, string>>();
  /** Output of finished init containers, by `<ns>/<pod>/<container>` (tests read it). */
  readonly initLogs = new Map<string, string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  readonly opts: Required<FakeKubeOptions>;
  url = '';

  constructor(opts: FakeKubeOptions = {}) {
    this.opts = { gpus: 0, pullFails: () => false, startDelayMs: 0, python: '/usr/bin/python3', claims: {}, ...opts };
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** A KubeConfig pointing the real client at this server. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'fake', token: 'fake-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
      currentContext: 'fake',
    });
    return kc;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    for (const r of this.running.values()) this.stopProcess(r);
    for (const w of this.watchers) w.res.end();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /**
   * The next `times` requests matching method and path answer `status` (with e.g. a Retry-After header).
   * With `land`, the request is carried out first and only its answer is replaced.
   */
  failNext(
    method: string,
    path: RegExp,
    statusCode: number,
    { times = 1, headers = {}, land = false }: { times?: number; headers?: Record<string, string>; land?: boolean } = {},
  ): void {
    this.faults.push({ method, path, status: statusCode, times, headers, land });
  }

  /**
   * Compacts the watch history: open watches get an ERROR event with code 410 and end, and watches from an
   * older resourceVersion get the same. With `http: n`, the next n watch requests answer HTTP 410 instead.
   */
  /** Watches of this kind open now (a test that expires watches waits for one, or there is nothing to expire). */
  openWatches(kind: Kind): number {
    return [...this.watchers].filter((w) => w.kind === kind).length;
  }

  expireWatches({ http = 0 }: { http?: number } = {}): void {
    this.compactedRv = this.rv;
    this.http410Watches = http;
    for (const w of [...this.watchers]) {
      w.res.write(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', 'too old resource version') })}\n`);
      w.res.end();
      this.watchers.delete(w);
    }
  }

  /** The kubelet evicts the pod (node pressure): the container is killed and the pod fails with reason Evicted. */
  evict(podName: string, message = 'The node was low on resource: memory.'): void {
    const key = [...this.store.pods.keys()].find((k) => k.endsWith(`/${podName}`));
    const pod = key ? this.store.pods.get(key) : undefined;
    if (!pod) throw new Error(`no pod ${podName}`);
    const r = this.running.get(key!);
    if (r) this.stopProcess(r);
    pod.status = {
      ...pod.status,
      phase: 'Failed',
      reason: 'Evicted',
      message,
      containerStatuses: [
        { ...pod.status.containerStatuses[0], state: { terminated: { exitCode: 137, reason: 'Error', finishedAt: nowIso() } } },
      ],
    };
    this.put('pods', pod, 'MODIFIED');
    this.failJob(pod, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
  }

  list(kind: Kind): Obj[] {
    return [...this.store[kind].values()].map(clone);
  }

  /** Python processes still running for pods (should be none after a run). */
  liveProcesses(): number {
    return [...this.running.values()].filter((r) => !r.exited).length;
  }

  /**
   * Polls until `probe` returns a truthy value, and returns it, so that the caller asserts on what the wait saw rather
   * than on a second look; no deadline but the test's own timeout (see test/helpers/poll.ts).
   */
  async waitFor<T>(probe: () => T, what = 'a fake-kube-api condition'): Promise<NonNullable<T>> {
    return waitFor(probe, { what, everyMs: 20 });
  }

  // ---- HTTP ----

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const query = Object.fromEntries(url.searchParams);
    const method = req.method ?? 'GET';
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj) : undefined;
    const send = (code: number, obj: Obj, headers: Record<string, string> = {}) => {
      this.requests.push({ method, path: url.pathname, query, status: code });
      res.writeHead(code, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(obj));
    };
    if (req.headers.authorization !== 'Bearer fake-token') return send(401, status(401, 'Unauthorized', 'Unauthorized'));
    const fault = this.faults.find((f) => f.method === method && f.path.test(url.pathname) && f.times > 0);
    if (fault) {
      fault.times -= 1;
      const answer = () => send(fault.status, status(fault.status, 'Injected', `injected ${fault.status}`), fault.headers);
      if (!fault.land) return answer();
      return this.route(method, url, query, body, () => undefined, res, answer);
    }
    return this.route(method, url, query, body, send, res);
  }

  private route(
    method: string,
    url: URL,
    query: Record<string, string>,
    body: Obj | undefined,
    reply: (code: number, obj: Obj, headers?: Record<string, string>) => void,
    res: ServerResponse,
    after?: () => void,
  ): void {
    const send = (code: number, obj: Obj, headers: Record<string, string> = {}) => {
      reply(code, obj, headers);
      after?.();
    };
    const m = /^\/(?:api\/v1|apis\/batch\/v1)\/namespaces\/([^/]+)\/(configmaps|jobs|pods)(?:\/([^/]+))?(?:\/(log))?$/.exec(url.pathname);
    if (!m) return send(404, status(404, 'NotFound', `no route ${url.pathname}`));
    const [, ns, kind, name, sub] = m as unknown as [string, string, Kind, string | undefined, string | undefined];
    const key = `${ns}/${name ?? ''}`;

    if (sub === 'log' && method === 'GET') return this.serveLog(key, name!, query, res, method, url.pathname);
    if (!name && method === 'GET') {
      const labelMatch = parseSelector(query.labelSelector, (o, k) => o.metadata?.labels?.[k]);
      const fieldMatch = parseSelector(query.fieldSelector, (o, k) =>
        k === 'metadata.name' ? o.metadata?.name : k === 'metadata.namespace' ? o.metadata?.namespace : undefined,
      );
      const matches = (o: Obj) => o.metadata?.namespace === ns && labelMatch(o) && fieldMatch(o);
      if (query.watch === 'true' || query.watch === '1') return this.serveWatch(kind, ns, matches, query, res, method, url.pathname);
      const items = [...this.store[kind].values()].filter(matches).map(clone);
      return send(200, { ...LIST_KIND[kind], metadata: { resourceVersion: String(this.rv) }, items });
    }
    if (!name && method === 'POST') {
      const objName = body?.metadata?.name ?? `${body?.metadata?.generateName ?? 'x-'}${randomBytes(3).toString('hex')}`;
      const k = `${ns}/${objName}`;
      if (this.store[kind].has(k)) return send(409, status(409, 'AlreadyExists', `${kind} "${objName}" already exists`));
      const obj = clone(body!);
      obj.metadata = { ...obj.metadata, name: objName, namespace: ns, uid: randomUUID(), creationTimestamp: nowIso() };
      if (kind === 'jobs') obj.status = {};
      this.created.push({ kind, object: clone(obj) });
      this.put(kind, obj, 'ADDED');
      if (kind === 'jobs') this.later(0, () => this.startJob(k));
      return send(201, clone(obj));
    }
    const current = this.store[kind].get(key);
    if (!current) return send(404, status(404, 'NotFound', `${kind} "${name}" not found`));
    if (method === 'GET') return send(200, clone(current));
    if (method === 'PUT') {
      if (body?.metadata?.resourceVersion && body.metadata.resourceVersion !== current.metadata.resourceVersion) {
        return send(409, status(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version'));
      }
      const obj: Obj = { ...clone(body!), status: current.status };
      obj.metadata = { ...obj.metadata, uid: current.metadata.uid, creationTimestamp: current.metadata.creationTimestamp };
      this.put(kind, obj, 'MODIFIED');
      return send(200, clone(obj));
    }
    if (method === 'DELETE') {
      this.remove(kind, key, query.propagationPolicy ?? 'Background');
      return send(200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind } });
    }
    return send(405, status(405, 'MethodNotAllowed', method));
  }

  private serveWatch(
    kind: Kind,
    ns: string,
    matches: (o: Obj) => boolean,
    query: Record<string, string>,
    res: ServerResponse,
    method: string,
    path: string,
  ): void {
    if (this.http410Watches > 0) {
      this.http410Watches -= 1;
      this.requests.push({ method, path, query, status: 410 });
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status(410, 'Expired', 'too old resource version')));
      return;
    }
    this.requests.push({ method, path, query, status: 200 });
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    const from = query.resourceVersion ? Number(query.resourceVersion) : undefined;
    if (from !== undefined && from < this.compactedRv) {
      res.end(`${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${from}`) })}\n`);
      return;
    }
    const w: Watcher = { kind, ns, matches, res, rv: from ?? this.rv };
    if (from === undefined) {
      for (const o of this.store[kind].values()) if (matches(o)) res.write(`${JSON.stringify({ type: 'ADDED', object: o })}\n`);
    } else {
      for (const e of this.history)
        if (e.kind === kind && e.rv > from && matches(e.object)) res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
    }
    this.watchers.add(w);
    const timeout = Number(query.timeoutSeconds ?? 0);
    if (timeout > 0) this.later(timeout * 1000, () => this.endWatch(w));
    res.on('close', () => this.watchers.delete(w));
  }

  private endWatch(w: Watcher): void {
    if (!this.watchers.delete(w)) return;
    w.res.end();
  }

  private serveLog(key: string, name: string, query: Record<string, string>, res: ServerResponse, method: string, path: string): void {
    const pod = this.store.pods.get(key);
    const reply = (code: number, obj: Obj) => {
      this.requests.push({ method, path, query, status: code });
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(obj));
    };
    if (!pod) return reply(404, status(404, 'NotFound', `pods "${name}" not found`));
    const r = this.running.get(key);
    if (!r) {
      const reason = pod.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? 'ContainerCreating';
      return reply(400, status(400, 'BadRequest', `container "repro" in pod "${name}" is waiting to start: ${reason}`));
    }
    this.requests.push({ method, path, query, status: 200 });
    res.writeHead(200, { 'content-type': 'text/plain' });
    let budget = query.limitBytes ? Number(query.limitBytes) : Number.POSITIVE_INFINITY;
    const write = (chunk: Buffer) => {
      if (budget <= 0) return;
      const part = chunk.subarray(0, Math.min(chunk.length, budget));
      budget -= part.length;
      res.write(part);
    };
    for (const c of r.log) write(c);
    if (query.follow !== 'true' || r.exited || budget <= 0) return void res.end();
    const follower = Object.assign(res, { writeChunk: write });
    r.followers.add(follower);
    res.on('close', () => r.followers.delete(follower));
  }

  // ---- store ----

  private put(kind: Kind, obj: Obj, type: string): void {
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    this.store[kind].set(key, obj);
    this.emit(kind, type, obj);
  }

  private emit(kind: Kind, type: string, obj: Obj): void {
    const snapshot = clone(obj);
    this.history.push({ kind, ns: snapshot.metadata.namespace, type, object: snapshot, rv: this.rv });
    for (const w of this.watchers) {
      if (w.kind === kind && w.matches(snapshot)) w.res.write(`${JSON.stringify({ type, object: snapshot })}\n`);
    }
  }

  private remove(kind: Kind, key: string, propagation: string): void {
    const obj = this.store[kind].get(key);
    if (!obj) return;
    this.store[kind].delete(key);
    this.rv += 1;
    obj.metadata.resourceVersion = String(this.rv);
    this.emit(kind, 'DELETED', obj);
    if (kind === 'pods') {
      const r = this.running.get(key);
      if (r) this.stopProcess(r);
    }
    if (kind === 'jobs' && propagation !== 'Orphan') {
      // The garbage collector: dependents (pods, a ConfigMap the Job owns) go with their owner.
      for (const k of ['pods', 'configmaps'] as const) {
        for (const [dk, d] of [...this.store[k].entries()]) {
          if (d.metadata.ownerReferences?.some((o: Obj) => o.uid === obj.metadata.uid)) this.remove(k, dk, propagation);
        }
      }
    }
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  // ---- controller, scheduler, kubelet ----

  private startJob(jobKey: string): void {
    const job = this.store.jobs.get(jobKey);
    if (!job || job.spec?.suspend) return;
    job.status = { ...job.status, startTime: nowIso(), active: 1 };
    this.put('jobs', job, 'MODIFIED');
    const tpl = job.spec.template;
    const podName = `${job.metadata.name}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    const pod: Obj = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: podName,
        namespace: job.metadata.namespace,
        uid: randomUUID(),
        creationTimestamp: nowIso(),
        labels: { ...tpl.metadata?.labels, 'batch.kubernetes.io/job-name': job.metadata.name, 'job-name': job.metadata.name },
        annotations: tpl.metadata?.annotations,
        ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, controller: true }],
      },
      spec: clone(tpl.spec),
      status: { phase: 'Pending', qosClass: 'Guaranteed' },
    };
    this.put('pods', pod, 'ADDED');
    const podKey = `${pod.metadata.namespace}/${podName}`;
    const deadline = job.spec.activeDeadlineSeconds;
    if (deadline) this.later(deadline * 1000, () => this.deadlineExceeded(jobKey, podKey));
    this.later(5, () => this.schedule(podKey));
  }

  private deadlineExceeded(jobKey: string, podKey: string): void {
    const job = this.store.jobs.get(jobKey);
    if (!job || job.status?.conditions?.some((c: Obj) => c.type === 'Complete' || c.type === 'Failed')) return;
    this.remove('pods', podKey, 'Background');
    job.status = {
      ...job.status,
      active: 0,
      failed: 1,
      conditions: [
        {
          type: 'FailureTarget',
          status: 'True',
          reason: 'DeadlineExceeded',
          message: 'Job was active longer than specified deadline',
          lastTransitionTime: nowIso(),
        },
        {
          type: 'Failed',
          status: 'True',
          reason: 'DeadlineExceeded',
          message: 'Job was active longer than specified deadline',
          lastTransitionTime: nowIso(),
        },
      ],
    };
    this.put('jobs', job, 'MODIFIED');
  }

  private schedule(podKey: string): void {
    const pod = this.store.pods.get(podKey);
    if (!pod) return;
    const c = pod.spec.containers[0];
    const gpus = Number(c.resources?.limits?.['nvidia.com/gpu'] ?? 0);
    const nodeLabels: Record<string, string> = this.opts.gpus > 0 ? { 'nvidia.com/gpu.present': 'true' } : {};
    const selectorOk = Object.entries(pod.spec.nodeSelector ?? {}).every(([k, v]) => nodeLabels[k] === v);
    if (gpus > this.opts.gpus || !selectorOk) {
      const why = gpus > this.opts.gpus ? '1 Insufficient nvidia.com/gpu' : "1 node(s) didn't match Pod's node affinity/selector";
      pod.status = {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: `0/1 nodes are available: ${why}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.`,
          },
        ],
      };
      this.put('pods', pod, 'MODIFIED');
      return;
    }
    pod.spec.nodeName = 'fake-node';
    pod.status = {
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'True' }],
      containerStatuses: [
        { name: c.name, image: c.image, ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } },
      ],
    };
    this.put('pods', pod, 'MODIFIED');
    this.later(this.opts.startDelayMs, () => this.pullAndStart(podKey, 0));
  }

  private pullAndStart(podKey: string, attempt: number): void {
    const pod = this.store.pods.get(podKey);
    if (!pod) return;
    const c = pod.spec.containers[0];
    if (this.opts.pullFails(c.image)) {
      const reason = attempt === 0 ? 'ErrImagePull' : 'ImagePullBackOff';
      const message =
        attempt === 0 ? `failed to pull and unpack image "${c.image}": pull access denied` : `Back-off pulling image "${c.image}"`;
      pod.status.containerStatuses[0].state = { waiting: { reason, message } };
      this.put('pods', pod, 'MODIFIED');
      this.later(150, () => this.pullAndStart(podKey, attempt + 1));
      return;
    }
    if (!pod.spec.initContainers?.length) {
      this.startContainer(podKey, pod, c);
      return;
    }
    const dirs: string[] = [];
    void this.runInitContainers(podKey, pod, dirs).then((ok) => {
      const current = this.store.pods.get(podKey);
      if (ok && current) this.startContainer(podKey, current, current.spec.containers[0], dirs);
    });
  }

  /** One temp dir per pod volume, shared by the pod's containers (init containers write what the main one reads). */
  private volumeDir(pod: Obj, volumeName: string, dirs: string[]): string {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    let vols = this.podVolumes.get(key);
    if (!vols) this.podVolumes.set(key, (vols = new Map()));
    const known = vols.get(volumeName);
    if (known) return known;
    const vol = pod.spec.volumes.find((v: Obj) => v.name === volumeName);
    const claimed = vol?.persistentVolumeClaim ? this.opts.claims[vol.persistentVolumeClaim.claimName] : undefined;
    if (claimed) {
      vols.set(volumeName, claimed);
      return claimed;
    }
    const dir = makeTempDir(`fake-kubelet-${volumeName}-`);
    dirs.push(dir);
    vols.set(volumeName, dir);
    if (vol?.configMap) {
      const cm = this.store.configmaps.get(`${pod.metadata.namespace}/${vol.configMap.name}`);
      for (const [k, v] of Object.entries(cm?.data ?? {})) writeFileSync(join(dir, k), String(v));
    }
    return dir;
  }

  /** The container's command as this host runs it: mount paths mapped onto the pod's volume dirs. */
  private prepareProcess(pod: Obj, c: Obj, dirs: string[]): { argv: string[]; env: Record<string, string>; cwd: string } {
    const mounts: Array<[string, string]> = [];
    for (const vm of c.volumeMounts ?? []) {
      const dir = this.volumeDir(pod, vm.name, dirs);
      mounts.push([vm.mountPath, vm.subPath ? join(dir, vm.subPath) : dir]);
    }
    mounts.sort((a, b) => b[0].length - a[0].length);
    const mapPath = (s: string): string => {
      for (const [from, to] of mounts) if (s === from || s.startsWith(`${from}/`)) return to + s.slice(from.length);
      // PYTHONPATH-like lists: map each entry.
      if (s.includes(':') && s.startsWith('/'))
        return s
          .split(':')
          .map((p) => mapPath(p))
          .join(':');
      return s;
    };
    // The "image": `python` and `python3` on its PATH are the configured interpreter, nothing of the host's PATH.
    const imageBin = makeTempDir('fake-kubelet-bin-');
    dirs.push(imageBin);
    for (const n of ['python', 'python3']) symlinkSync(this.opts.python, join(imageBin, n));
    const env: Record<string, string> = { PATH: `${imageBin}:/usr/local/bin:/usr/bin:/bin` };
    for (const e of c.env ?? []) env[e.name] = mapPath(String(e.value ?? ''));
    const argv = [...(c.command ?? []), ...(c.args ?? [])].map(mapPath);
    if (argv[0] && !argv[0].includes('/')) argv[0] = join(imageBin, argv[0]);
    const cwd = mapPath(c.workingDir ?? '/');
    mkdirSync(cwd, { recursive: true });
    mkdirSync(dirname(cwd), { recursive: true });
    return { argv, env, cwd };
  }

  /** Init containers in order, each to completion; false (and the pod failed) when one exits non-zero. */
  private async runInitContainers(podKey: string, pod: Obj, dirs: string[]): Promise<boolean> {
    const statuses: Obj[] = [];
    for (const c of pod.spec.initContainers ?? []) {
      const { argv, env, cwd } = this.prepareProcess(pod, c, dirs);
      const log: Buffer[] = [];
      const code = await new Promise<number>((resolve) => {
        const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
        child.stdout!.on('data', (d: Buffer) => log.push(d));
        child.stderr!.on('data', (d: Buffer) => log.push(d));
        child.on('error', () => resolve(127));
        child.on('close', (code) => resolve(code ?? 137));
      });
      this.initLogs.set(`${podKey}/${c.name}`, Buffer.concat(log).toString());
      statuses.push({
        name: c.name,
        image: c.image,
        ready: code === 0,
        restartCount: 0,
        state: { terminated: { exitCode: code, reason: code === 0 ? 'Completed' : 'Error' } },
      });
      const current = this.store.pods.get(podKey);
      if (!current) return false;
      current.status = { ...current.status, initContainerStatuses: [...statuses] };
      if (code !== 0) {
        current.status.phase = 'Failed';
        this.put('pods', current, 'MODIFIED');
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
        this.failJob(current, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
        return false;
      }
      this.put('pods', current, 'MODIFIED');
    }
    return true;
  }

  private startContainer(podKey: string, pod: Obj, c: Obj, dirs: string[] = []): void {
    const { argv, env, cwd } = this.prepareProcess(pod, c, dirs);
    const child = spawn(argv[0]!, argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const r: Running = { child, dirs, log: [], followers: new Set(), oomKilled: false, exited: false };
    this.running.set(podKey, r);
    const onData = (chunk: Buffer) => {
      r.log.push(chunk);
      for (const f of r.followers) (f as ServerResponse & { writeChunk: (c: Buffer) => void }).writeChunk(chunk);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    const limit = quantityToBytes(String(c.resources?.limits?.memory ?? 'Inf'));
    if (Number.isFinite(limit)) {
      r.memTimer = setInterval(() => {
        if (r.exited || !child.pid) return;
        if (rssBytes(descendants(child.pid)) > limit) {
          r.oomKilled = true;
          killTree(child.pid);
        }
      }, 25);
    }
    const startedAt = nowIso();
    pod.status = {
      ...pod.status,
      phase: 'Running',
      containerStatuses: [{ name: c.name, image: c.image, ready: true, restartCount: 0, started: true, state: { running: { startedAt } } }],
    };
    this.put('pods', pod, 'MODIFIED');
    let closed = 0;
    let exitInfo: { code: number | null; sig: NodeJS.Signals | null } | undefined;
    const finish = () => {
      if (closed < 3 || !exitInfo) return;
      this.containerExited(podKey, r, exitInfo.code, exitInfo.sig, startedAt);
    };
    child.stdout!.on('close', () => {
      closed += 1;
      finish();
    });
    child.stderr!.on('close', () => {
      closed += 1;
      finish();
    });
    child.on('error', () => {
      r.log.push(Buffer.from(`exec: "${argv[0]}": executable file not found in $PATH\n`));
    });
    child.on('close', (code, sig) => {
      exitInfo = { code, sig };
      closed += 1;
      finish();
    });
  }

  private stopProcess(r: Running): void {
    if (!r.exited) killTree(r.child.pid);
  }

  private containerExited(podKey: string, r: Running, code: number | null, sig: NodeJS.Signals | null, startedAt: string): void {
    r.exited = true;
    if (r.memTimer) clearInterval(r.memTimer);
    for (const f of r.followers) f.end();
    r.followers.clear();
    for (const d of r.dirs) rmSync(d, { recursive: true, force: true });
    const pod = this.store.pods.get(podKey);
    if (!pod || pod.status?.reason === 'Evicted') return;
    const sigNum = sig ? (({ SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11, SIGABRT: 6 } as Record<string, number>)[sig] ?? 9) : 0;
    const exitCode = code ?? 128 + sigNum;
    const reason = r.oomKilled ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error';
    pod.status = {
      ...pod.status,
      phase: exitCode === 0 ? 'Succeeded' : 'Failed',
      containerStatuses: [
        {
          ...pod.status.containerStatuses[0],
          ready: false,
          started: false,
          state: {
            terminated: {
              exitCode,
              reason,
              startedAt,
              finishedAt: nowIso(),
              containerID: `containerd://${randomBytes(8).toString('hex')}`,
            },
          },
        },
      ],
    };
    this.put('pods', pod, 'MODIFIED');
    const jobName = pod.metadata.labels?.['job-name'];
    const job = this.store.jobs.get(`${pod.metadata.namespace}/${jobName}`);
    if (!job) return;
    if (exitCode === 0) {
      job.status = {
        ...job.status,
        active: 0,
        succeeded: 1,
        completionTime: nowIso(),
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True', reason: 'CompletionsReached', lastTransitionTime: nowIso() },
          { type: 'Complete', status: 'True', reason: 'CompletionsReached', lastTransitionTime: nowIso() },
        ],
      };
      this.put('jobs', job, 'MODIFIED');
    } else {
      this.failJob(pod, 'BackoffLimitExceeded', 'Job has reached the specified backoff limit');
    }
  }

  private failJob(pod: Obj, reason: string, message: string): void {
    const job = this.store.jobs.get(`${pod.metadata.namespace}/${pod.metadata.labels?.['job-name']}`);
    if (!job || job.status?.conditions?.some((c: Obj) => c.type === 'Failed')) return;
    job.status = {
      ...job.status,
      active: 0,
      failed: 1,
      conditions: [
        { type: 'FailureTarget', status: 'True', reason, message, lastTransitionTime: nowIso() },
        { type: 'Failed', status: 'True', reason, message, lastTransitionTime: nowIso() },
      ],
    };
    this.put('jobs', job, 'MODIFIED');
  }
}

export async function startFakeKubeApi(opts: FakeKubeOptions = {}): Promise<FakeKubeApi> {
  return new FakeKubeApi(opts).start();
}

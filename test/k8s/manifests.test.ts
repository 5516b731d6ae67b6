import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { KubernetesExecConfig, readKubernetesConfig } from '../../src/exec/kubernetes/config.js';
import { createKubernetesExecutor } from '../../src/exec/kubernetes/executor.js';
import { startFakeKubeApi } from '../helpers/fake-kube-api.js';
import { renderRun } from '../../src/exec/kubernetes/render.js';
import { RunRequest } from '../../src/exec/types.js';
import { PINNED_UV } from '../../src/env/uv-builder.js';

/**
 * Every manifest in k8s/ parsed with the yaml package and checked against the deployment's promises: limits
 * and non-root everywhere, no egress and no token for repro pods, a namespace-scoped worker Role that cannot
 * read Secrets, Secrets referenced and never inlined.
 */

type Obj = Record<string, any>;
const ROOT = fileURLToPath(new URL('../../k8s/', import.meta.url));

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(name) ? [p] : [];
  });
}

const files = yamlFiles(ROOT);
const docs: Array<{ file: string; doc: Obj }> = files.flatMap((file) =>
  parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
    if (d.errors.length) throw new Error(`${relative(ROOT, file)}: ${d.errors[0]?.message}`);
    return { file: relative(ROOT, file), doc: d.toJS() as Obj };
  }),
);
const objects = docs.filter((d) => d.doc && d.doc.kind && d.doc.kind !== 'Kustomization' && d.doc.kind !== 'Component');
const ofKind = (kind: string) => objects.filter((o) => o.doc.kind === kind).map((o) => o.doc);

/** Pod specs of every workload in k8s/, plus the repro pods the executor renders (CPU and GPU). */
function podSpecs(): Array<{ name: string; spec: Obj }> {
  const fromManifests = objects
    .filter((o) => ['Deployment', 'StatefulSet', 'Job', 'DaemonSet', 'CronJob'].includes(o.doc.kind))
    .filter((o) => o.doc.spec?.template?.spec) // strategic-merge patches carry no pod template
    .map((o) => ({ name: `${o.file}:${o.doc.metadata.name}`, spec: o.doc.spec.template.spec as Obj }));
  const config = KubernetesExecConfig.parse({ kind: 'kubernetes' });
  const repro = [0, 1].map((gpus) => {
    const req = RunRequest.parse({ files: [{ path: 'main.py', content: 'print(1)' }], entry: 'main.py', gpus });
    return { name: `repro pod (gpus=${gpus})`, spec: renderRun(req, config, { runId: `t${gpus}` }).job.spec!.template.spec as Obj };
  });
  return [...fromManifests, ...repro];
}

describe('k8s/ manifests', () => {
  it('parses every file, and every kustomization lists files that exist', () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
    for (const k of docs.filter((d) => d.doc?.kind === 'Kustomization' || d.doc?.kind === 'Component')) {
      const dir = dirname(join(ROOT, k.file));
      for (const r of [...(k.doc.resources ?? []), ...(k.doc.components ?? []), ...(k.doc.patches ?? []).map((p: Obj) => p.path)]) {
        expect(existsSync(join(dir, r)), `${k.file} → ${r}`).toBe(true);
      }
    }
  });

  it('gives every container CPU and memory limits and runs it as non-root without privilege escalation', () => {
    const specs = podSpecs();
    expect(specs.length).toBeGreaterThanOrEqual(5);
    for (const { name, spec } of specs) {
      for (const c of [...(spec.initContainers ?? []), ...spec.containers] as Obj[]) {
        const where = `${name}/${c.name}`;
        expect(c.resources?.limits?.cpu, where).toBeTruthy();
        expect(c.resources?.limits?.memory, where).toBeTruthy();
        const nonRoot = c.securityContext?.runAsNonRoot ?? spec.securityContext?.runAsNonRoot;
        expect(nonRoot, where).toBe(true);
        const uid = c.securityContext?.runAsUser ?? spec.securityContext?.runAsUser;
        expect(uid, where).toBeGreaterThan(0);
        expect(c.securityContext?.allowPrivilegeEscalation, where).toBe(false);
        expect(c.securityContext?.capabilities?.drop, where).toContain('ALL');
        expect(c.securityContext?.privileged ?? false, where).toBe(false);
      }
    }
  });

  it('gives repro pods no service-account token, a read-only root and RuntimeDefault seccomp', () => {
    for (const { name, spec } of podSpecs().filter((p) => p.name.startsWith('repro pod'))) {
      expect(spec.automountServiceAccountToken, name).toBe(false);
      expect(spec.securityContext.seccompProfile.type, name).toBe('RuntimeDefault');
      expect(spec.containers[0].securityContext.readOnlyRootFilesystem, name).toBe(true);
      expect(spec.restartPolicy, name).toBe('Never');
    }
    // The app never talks to the API either; only the worker's ServiceAccount carries a token.
    const app = ofKind('Deployment').find((d) => d.metadata.name === 'repgen-app')!;
    expect(app.spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it('denies all egress to repro pods by default; only the opt-in allowlist opens any, and not to everything', () => {
    const policies = ofKind('NetworkPolicy').filter((p) => p.metadata.namespace === 'repgen-repro');
    const denyAll = policies.find((p) => Object.keys(p.spec.podSelector ?? {}).length === 0);
    expect(denyAll, 'a policy selecting every repro pod').toBeDefined();
    expect(denyAll!.spec.policyTypes).toContain('Egress');
    expect(denyAll!.spec.egress ?? []).toEqual([]);
    // Any policy that grants egress must select only the allowlist label, which network=false runs never carry.
    const config = KubernetesExecConfig.parse({ kind: 'kubernetes' });
    const req = RunRequest.parse({ files: [{ path: 'm.py', content: '' }], entry: 'm.py' });
    const podLabels = renderRun(req, config, { runId: 'x' }).job.spec!.template.metadata!.labels!;
    for (const p of policies.filter((q) => (q.spec.egress ?? []).length > 0)) {
      const sel = p.spec.podSelector.matchLabels as Record<string, string>;
      if (sel['repgen.dev/workspace'] === 'fetch') {
        // Workspace runs reach the worker's workspace port and nothing else: no DNS, no CIDR.
        expect(sel).toEqual({ 'repgen.dev/workspace': 'fetch' });
        expect(p.spec.egress).toHaveLength(1);
        expect(p.spec.egress[0].to).toEqual([
          {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'repgen' } },
            podSelector: { matchLabels: { 'app.kubernetes.io/name': 'repgen-worker' } },
          },
        ]);
        expect(p.spec.egress[0].ports).toEqual([{ protocol: 'TCP', port: 8472 }]);
        continue;
      }
      // Env-build pods (k8s/components/env-cache) reach the index; no script's run carries their label.
      expect([{ 'repgen.dev/network': 'allowlist' }, { 'repgen.dev/network': 'env-build' }]).toContainEqual(sel);
      expect(Object.entries(sel).every(([k, v]) => podLabels[k] === v)).toBe(false);
      for (const rule of p.spec.egress as Obj[]) {
        for (const to of rule.to ?? []) expect(to.ipBlock?.cidr).not.toBe('0.0.0.0/0');
      }
    }
    // The allowlist is a separate component, not in the base.
    const base = docs.find((d) => d.file === join('base', 'kustomization.yaml'))!.doc;
    expect(JSON.stringify(base)).not.toContain('egress-allowlist');
  });

  it('wires the workspace port: each worker advertises its own pod IP on 8472, and both policies match exactly those pods', () => {
    const worker = ofKind('Deployment').find((d) => d.metadata.name === 'repgen-worker')!;
    const workerLabels = worker.spec.template.metadata.labels as Record<string, string>;
    const c = worker.spec.template.spec.containers[0];
    expect(c.ports).toContainEqual({ name: 'workspace', containerPort: 8472, protocol: 'TCP' });
    const env = c.env as Obj[];
    const names = env.map((e) => e.name);
    const url = env.find((e) => e.name === 'REPGEN_K8S_WORKSPACE_URL')!.value as string;
    expect(url).toBe('http://$(POD_IP):8472');
    expect(env.find((e) => e.name === 'POD_IP')!.valueFrom).toEqual({ fieldRef: { fieldPath: 'status.podIP' } });
    // The kubelet expands $(POD_IP) only from variables listed before it.
    expect(names.indexOf('POD_IP')).toBeLessThan(names.indexOf('REPGEN_K8S_WORKSPACE_URL'));
    const baseConfig = docs.find((d) => d.file === join('base', 'app-config.yaml'))!.doc.data as Record<string, string>;
    const cfg = readKubernetesConfig({ ...baseConfig, REPGEN_K8S_WORKSPACE_URL: url.replace('$(POD_IP)', '10.4.0.17') });
    expect(new URL(cfg.workspaceUrl!).port).toBe(String(cfg.workspacePort));
    expect(cfg.workspacePort).toBe(8472);

    // The API server labels every namespace kubernetes.io/metadata.name=<name>.
    const nsLabels = (name: string) => ({
      ...ofKind('Namespace').find((n) => n.metadata.name === name)!.metadata.labels,
      'kubernetes.io/metadata.name': name,
    });
    const fits = (sel: Obj | undefined, labels: Record<string, string>) =>
      Object.keys(sel?.matchLabels ?? {}).length > 0 &&
      Object.entries(sel!.matchLabels as Record<string, string>).every(([k, v]) => labels[k] === v);
    const config = KubernetesExecConfig.parse({ kind: 'kubernetes' });
    const files = [{ path: 'm.py', content: '' }];
    const fetching = renderRun(RunRequest.parse({ files, entry: 'm.py', workspace: { hostPath: '/tmp/x' } }), config, {
      runId: 'w',
      workspace: { url: 'http://10.4.0.17:8472/workspace/0', token: 't' },
    }).job.spec!.template.metadata!.labels!;
    const plain = renderRun(RunRequest.parse({ files, entry: 'm.py' }), config, { runId: 'p' }).job.spec!.template.metadata!.labels!;

    // Egress of the fetching repro pods: to the worker pods of the worker's namespace, port 8472.
    const egress = ofKind('NetworkPolicy').filter(
      (p) => p.metadata.namespace === 'repgen-repro' && fits(p.spec.podSelector, fetching) && (p.spec.egress ?? []).length > 0,
    );
    expect(egress).toHaveLength(1);
    const to = egress[0]!.spec.egress[0].to[0];
    expect(fits(to.namespaceSelector, nsLabels(worker.metadata.namespace))).toBe(true);
    expect(fits(to.podSelector, workerLabels)).toBe(true);
    expect(fits(egress[0]!.spec.podSelector, plain)).toBe(false);

    // Ingress of the worker: that port, from those pods only.
    const ingress = ofKind('NetworkPolicy').filter(
      (p) => p.metadata.namespace === worker.metadata.namespace && fits(p.spec.podSelector, workerLabels),
    );
    expect(ingress).toHaveLength(1);
    expect(ingress[0]!.spec.policyTypes).toEqual(['Ingress']);
    expect(ingress[0]!.spec.ingress).toHaveLength(1);
    const rule = ingress[0]!.spec.ingress[0];
    expect(rule.ports).toEqual([{ protocol: 'TCP', port: 8472 }]);
    expect(rule.from).toHaveLength(1);
    expect(fits(rule.from[0].namespaceSelector, nsLabels('repgen-repro'))).toBe(true);
    expect(fits(rule.from[0].podSelector, fetching)).toBe(true);
    expect(fits(rule.from[0].podSelector, plain)).toBe(false);
    // No Service fronts the workers: it would hand a fetch to a replica that holds no offer.
    expect(ofKind('Service').filter((s) => fits({ matchLabels: s.spec.selector }, workerLabels))).toEqual([]);
  });

  it("limits the worker's Role to the repro namespace: jobs, pods, pods/log, configmaps, never Secrets", () => {
    expect(ofKind('ClusterRole')).toEqual([]);
    expect(ofKind('ClusterRoleBinding')).toEqual([]);
    const roles = ofKind('Role');
    expect(roles).toHaveLength(1);
    const role = roles[0]!;
    expect(role.metadata.namespace).toBe('repgen-repro');
    const granted = new Set<string>();
    for (const rule of role.rules as Obj[]) {
      for (const r of rule.resources as string[]) granted.add(r);
      expect(rule.resources).not.toContain('*');
      expect(rule.verbs).not.toContain('*');
      expect(rule.apiGroups).not.toContain('*');
    }
    expect([...granted].sort()).toEqual(['configmaps', 'jobs', 'pods', 'pods/log']);
    expect(granted.has('secrets')).toBe(false);
    const binding = ofKind('RoleBinding').find((b) => b.roleRef.name === role.metadata.name)!;
    expect(binding.metadata.namespace).toBe('repgen-repro');
    expect(binding.roleRef.kind).toBe('Role');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'repgen-worker', namespace: 'repgen' }]);
    const worker = ofKind('Deployment').find((d) => d.metadata.name === 'repgen-worker')!;
    expect(worker.spec.template.spec.serviceAccountName).toBe('repgen-worker');
  });

  it("lets the executor do all it does with the worker's Role alone (checked against real runs on the fake API)", async () => {
    const role = ofKind('Role')[0]!;
    const allowed = (group: string, resource: string, verb: string) =>
      (role.rules as Obj[]).some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    const api = await startFakeKubeApi();
    try {
      const exec = createKubernetesExecutor({ config: readKubernetesConfig({}), kubeConfig: api.kubeConfig(), tickMs: 50 });
      await exec.run({ files: [{ path: 'm.py', content: 'print(1)' }], entry: 'm.py' });
      const controller = new AbortController();
      const aborted = exec.run({ files: [{ path: 'm.py', content: 'import time\ntime.sleep(30)' }], entry: 'm.py' }, controller.signal);
      await api.waitFor(() => api.list('pods').some((p) => p.status?.phase === 'Running'));
      controller.abort();
      await aborted;
      expect(api.requests.length).toBeGreaterThan(10);
      for (const q of api.requests) {
        const m = /^\/(api\/v1|apis\/batch\/v1)\/namespaces\/([^/]+)\/([a-z]+)(\/[^/]+)?(\/log)?$/.exec(q.path)!;
        expect(m, q.path).not.toBeNull();
        expect(m[2]).toBe(role.metadata.namespace);
        const group = m[1] === 'api/v1' ? '' : 'batch';
        const resource = m[5] ? `${m[3]}/log` : m[3]!;
        const verb = { POST: 'create', PUT: 'update', DELETE: 'delete' }[q.method] ?? (m[4] ? 'get' : q.query.watch ? 'watch' : 'list');
        expect(allowed(group, resource, verb), `${q.method} ${q.path} needs ${verb} ${resource}`).toBe(true);
      }
    } finally {
      await api.close();
    }
  });

  it('references Secrets and never inlines one', () => {
    for (const s of ofKind('Secret')) expect(s.data ?? s.stringData, `Secret ${s.metadata?.name} with data`).toBeUndefined();
    const secretish = /(TOKEN|SECRET|PASSWORD|API_KEY|PRIVATE_KEY)$/;
    let referenced = 0;
    for (const { name, spec } of podSpecs()) {
      for (const c of spec.containers as Obj[]) {
        for (const e of (c.env ?? []) as Obj[]) {
          if (!secretish.test(e.name)) continue;
          expect(e.value, `${name}/${c.name} ${e.name} inlined`).toBeUndefined();
          expect(e.valueFrom?.secretKeyRef?.name, `${name}/${c.name} ${e.name}`).toBe('repgen-secrets');
          referenced += 1;
        }
      }
    }
    expect(referenced).toBeGreaterThanOrEqual(5);
    for (const cm of ofKind('ConfigMap')) {
      for (const k of Object.keys(cm.data ?? {})) expect(secretish.test(k), `ConfigMap ${cm.metadata.name} key ${k}`).toBe(false);
    }
  });

  it('has the app Deployment with probes behind a Service, a queue-depth scaler for the worker, Redis, quota and limits', () => {
    const app = ofKind('Deployment').find((d) => d.metadata.name === 'repgen-app')!;
    const c = app.spec.template.spec.containers[0];
    expect(c.readinessProbe.httpGet.path).toBe('/healthz');
    expect(c.livenessProbe).toBeDefined();
    const svc = ofKind('Service').find((s) => s.metadata.name === 'repgen-app')!;
    expect(svc.spec.selector).toEqual(app.spec.selector.matchLabels);
    const scaler = ofKind('ScaledObject')[0]!;
    expect(scaler.spec.scaleTargetRef.name).toBe('repgen-worker');
    expect(scaler.spec.triggers[0].metadata.listName).toBe('repgen:repro:wait');
    expect(ofKind('StatefulSet').map((s) => s.metadata.name)).toContain('repgen-redis');
    expect(ofKind('ResourceQuota').every((q) => q.metadata.namespace === 'repgen-repro')).toBe(true);
    expect(ofKind('LimitRange')[0]!.metadata.namespace).toBe('repgen-repro');
    const ns = ofKind('Namespace').find((n) => n.metadata.name === 'repgen-repro')!;
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
    expect(ofKind('Ingress')).toHaveLength(1);
  });

  it('GPU overlay: allows GPUs in the repro quota and its settings parse as the executor reads them', () => {
    const base = docs.find((d) => d.file === join('base', 'repro-quota.yaml') && d.doc.kind === 'ResourceQuota')!.doc;
    expect(base.spec.hard['requests.nvidia.com/gpu']).toBe('0');
    const gpuQuota = docs.find((d) => d.file === join('overlays', 'gpu', 'quota-gpu.yaml'))!.doc;
    expect(Number(gpuQuota.spec.hard['requests.nvidia.com/gpu'])).toBeGreaterThan(0);
    const baseConfig = docs.find((d) => d.file === join('base', 'app-config.yaml'))!.doc.data as Record<string, string>;
    const gpuConfig = docs.find((d) => d.file === join('overlays', 'gpu', 'config-gpu.yaml'))!.doc.data as Record<string, string>;
    const cfg = readKubernetesConfig({ ...baseConfig, ...gpuConfig });
    expect(cfg.gpuNodeSelector).toEqual({ 'nvidia.com/gpu.present': 'true' });
    expect(cfg.gpuTolerations[0]).toMatchObject({ key: 'nvidia.com/gpu', operator: 'Exists' });
    expect(cfg.namespace).toBe('repgen-repro');
  });

  it('env-cache component: the worker writes envs to its claim, repro pods get a read-only claim on the same files, build pods a read-write one, the config names all three', () => {
    const inComponent = docs.filter((d) => d.file.startsWith('components/env-cache/')).map((d) => d.doc);
    const claims = inComponent.filter((d) => d?.kind === 'PersistentVolumeClaim');
    const byName = (ns: string, mode: string) => claims.find((c) => c.metadata.namespace === ns && c.spec.accessModes.includes(mode));
    const worker = byName('repgen', 'ReadWriteMany');
    const reader = byName('repgen-repro', 'ReadOnlyMany');
    const build = byName('repgen-repro', 'ReadWriteMany');
    expect([worker, reader, build].every(Boolean)).toBe(true);
    const volumes = Object.fromEntries(inComponent.filter((d) => d?.kind === 'PersistentVolume').map((v) => [v.metadata.name, v]));
    const rw = volumes[worker?.spec.volumeName];
    const ro = volumes[reader?.spec.volumeName];
    expect(ro?.spec.nfs).toEqual({ ...rw?.spec.nfs, readOnly: true });
    expect(volumes[build?.spec.volumeName]?.spec.nfs).toEqual(rw?.spec.nfs);
    const config = inComponent.find((d) => d?.kind === 'ConfigMap');
    expect(config?.data).toEqual({
      REPGEN_ENV_CACHE: '/var/cache/repgen-envs',
      REPGEN_K8S_ENV_CACHE_CLAIM: reader?.metadata.name,
      REPGEN_K8S_ENV_BUILD_CLAIM: build?.metadata.name,
    });
    // Build pods reach DNS and one index CIDR, never everything.
    const policy = inComponent.find((d) => d?.kind === 'NetworkPolicy');
    expect(policy?.spec.podSelector.matchLabels).toEqual({ 'repgen.dev/network': 'env-build' });
    const blocks = (policy?.spec.egress as Obj[])
      .flatMap((e) => e.to)
      .map((t: Obj) => t.ipBlock?.cidr)
      .filter(Boolean);
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks).not.toContain('0.0.0.0/0');
    const patch = parseAllDocuments(readFileSync(join(ROOT, 'components/env-cache/worker-env-cache.yaml'), 'utf8'))[0]!.toJS() as Obj[];
    expect(patch.find((op) => /volumeMounts/.test(op.path))?.value.mountPath).toBe('/var/cache/repgen-envs');
    expect(patch.find((op) => /volumes\/-$/.test(op.path))?.value.persistentVolumeClaim.claimName).toBe(worker?.metadata.name);
  });

  it('the image holds the uv the builder runs, pinned to the version CI installs', () => {
    const repo = join(ROOT, '..');
    const dockerfile = readFileSync(join(repo, 'Dockerfile'), 'utf8');
    const ci = /UV_VERSION=(\S+)/.exec(readFileSync(join(repo, 'scripts/ensure-system.sh'), 'utf8'))?.[1];
    expect(ci).toBeDefined();
    expect(dockerfile).toContain(`COPY --from=ghcr.io/astral-sh/uv:${ci} /uv ${PINNED_UV}`);
  });
});

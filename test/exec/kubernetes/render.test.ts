import { describe, expect, it } from 'vitest';
import { SetupError } from '../../../src/errors.js';
import { InvalidRunRequestError, ProjectEnvUnavailableError } from '../../../src/exec/errors.js';
import { chooseImage, DEFAULT_IMAGE_TABLE, KubernetesExecConfig, readKubernetesConfig } from '../../../src/exec/kubernetes/config.js';
import { cpuThreads, MAX_CONFIGMAP_BYTES, renderRun, renderYaml, toLabelKey, toLabelValue } from '../../../src/exec/kubernetes/render.js';
import { RunRequest, type RunRequestInput } from '../../../src/exec/types.js';
import { parseDocument } from 'yaml';

const config = KubernetesExecConfig.parse({ kind: 'kubernetes' });
const req = (extra: Partial<RunRequestInput> = {}) =>
  RunRequest.parse({ files: [{ path: 'main.py', content: 'print(1)\n' }], entry: 'main.py', ...extra });

describe('image table', () => {
  it.each([
    [{ gpus: 0, versions: { torch: '2.1.0' } }, 'pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime'],
    [{ gpus: 1, versions: { PyTorch: 'v2.4.0+cu121' } }, 'pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime'],
    [{ gpus: 0, versions: { torch: '2.10.0' } }, 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime'],
    [{ gpus: 1, versions: { tensorflow: '2.15.1' } }, 'tensorflow/tensorflow:2.15.0-gpu'],
    [{ gpus: 0, versions: { tf: '2.15' } }, 'tensorflow/tensorflow:2.15.0'],
    [{ gpus: 0, versions: { tensorflow: '2.18.1' } }, 'tensorflow/tensorflow:2.18.0'],
    [{ gpus: 1, versions: { tensorflow: '2.16.2' } }, 'tensorflow/tensorflow:2.16.1-gpu'],
    [{ gpus: 0, versions: { keras: '2.13.1' } }, 'tensorflow/tensorflow:2.15.0'],
    [{ gpus: 0, versions: { keras: '3.15.0' } }, 'tensorflow/tensorflow:2.18.0'],
    [{ gpus: 0, versions: { keras: '3.15.0', torch: '2.5.1' } }, 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime'],
    [{ gpus: 0, versions: { keras: '3.15.0', jax: '0.10.2' } }, 'python:3.11-slim'],
    [{ gpus: 0, versions: { jax: '0.4.30' } }, 'python:3.11-slim'],
    [{ gpus: 0 }, 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime'],
    [{ gpus: 2, image: 'my/own:img', versions: { torch: '2.1' } }, 'my/own:img'],
  ])('%j → %s', (input, image) => {
    expect(chooseImage(DEFAULT_IMAGE_TABLE, input)).toBe(image);
  });

  it('returns null when no row fits, and the renderer turns that into a clear request error', () => {
    const table = [{ match: { jax: '*' }, image: 'jax:1' }];
    expect(chooseImage(table, { gpus: 0, versions: { torch: '2.1' } })).toBeNull();
    const cfg = KubernetesExecConfig.parse({ kind: 'kubernetes', images: table });
    expect(() => renderRun(req(), cfg, { runId: 'a' })).toThrow(/no image in the image table fits/);
  });
});

describe('settings', () => {
  it('reads defaults from an empty environment', () => {
    const c = readKubernetesConfig({});
    expect(c).toMatchObject({
      namespace: 'repgen-repro',
      python: 'python',
      cpu: '2',
      scheduleTimeoutMs: 600_000,
      imagePullGraceMs: 60_000,
      deadlineSlackSeconds: 900,
      ttlSecondsAfterFinished: 300,
      runAsUser: 1000,
    });
    expect(c.images).toEqual(DEFAULT_IMAGE_TABLE);
  });

  it('parses JSON settings and names the variable when one is wrong', () => {
    const c = readKubernetesConfig({
      REPGEN_K8S_IMAGES: '[{"match":{"torch":"2.2"},"gpu":true,"image":"x:1"}]',
      REPGEN_K8S_SCHEDULE_TIMEOUT_SECONDS: '30',
    });
    expect(c.images).toEqual([{ match: { torch: '2.2' }, gpu: true, image: 'x:1' }]);
    expect(c.scheduleTimeoutMs).toBe(30_000);
    expect(() => readKubernetesConfig({ REPGEN_K8S_IMAGES: '[{' })).toThrow(SetupError);
    expect(() => readKubernetesConfig({ REPGEN_K8S_IMAGES: '[{' })).toThrow(/REPGEN_K8S_IMAGES: is not valid JSON/);
    expect(() => readKubernetesConfig({ REPGEN_K8S_GPU_TOLERATIONS: '[{"operator":"Maybe"}]' })).toThrow(/REPGEN_K8S_GPU_TOLERATIONS/);
    expect(() => readKubernetesConfig({ REPGEN_K8S_NAMESPACE: 'Not_A_Namespace' })).toThrow(/REPGEN_K8S_NAMESPACE/);
  });

  it('reads the workspace URL and port, and refuses a URL the init container could not use or that would leak', () => {
    expect(readKubernetesConfig({})).toMatchObject({ workspacePort: 8472 });
    expect(readKubernetesConfig({}).workspaceUrl).toBeUndefined();
    expect(readKubernetesConfig({ REPGEN_K8S_WORKSPACE_URL: 'http://10.4.0.17:8472', REPGEN_K8S_WORKSPACE_PORT: '9000' })).toMatchObject({
      workspaceUrl: 'http://10.4.0.17:8472',
      workspacePort: 9000,
    });
    expect(readKubernetesConfig({ REPGEN_K8S_WORKSPACE_URL: 'https://[fd00::7]:8472/' }).workspaceUrl).toBe('https://[fd00::7]:8472/');
    const refused: Array<[string, RegExp]> = [
      ['ftp://10.0.0.1:8472', /http:\/\/ or https:\/\//],
      ['not a url', /http:\/\/ or https:\/\//],
      ['http://user:pw@10.0.0.1:8472', /credentials/],
      ['http://10.0.0.1:8472/workspace', /without a path/],
      ['http://10.0.0.1:8472?x=1', /without a path/],
      // The pod's env lists POD_IP after the URL, or not at all: Kubernetes leaves the reference as it is.
      ['http://$(POD_IP):8472', /unexpanded \$\(POD_IP\)/],
    ];
    for (const [url, why] of refused) {
      expect(() => readKubernetesConfig({ REPGEN_K8S_WORKSPACE_URL: url }), url).toThrow(SetupError);
      expect(() => readKubernetesConfig({ REPGEN_K8S_WORKSPACE_URL: url }), url).toThrow(
        new RegExp(`REPGEN_K8S_WORKSPACE_URL: .*${why.source}`),
      );
    }
    expect(() => readKubernetesConfig({ REPGEN_K8S_WORKSPACE_PORT: '0' })).toThrow(/REPGEN_K8S_WORKSPACE_PORT/);
    expect(() => readKubernetesConfig({ REPGEN_K8S_WORKSPACE_PORT: '65536' })).toThrow(/REPGEN_K8S_WORKSPACE_PORT/);
  });
});

describe('labels', () => {
  it('cleans values and keys into what the API accepts', () => {
    expect(toLabelValue('octo/repo#12: attempt 3')).toBe('octo-repo-12-attempt-3');
    expect(toLabelValue('-'.repeat(5) + 'a'.repeat(80))).toHaveLength(63);
    expect(toLabelValue('__x__')).toBe('x');
    expect(toLabelKey('issue')).toBe('repgen.dev/issue');
    expect(toLabelKey('example.com/Team')).toBe('example.com/Team');
  });
});

describe('renderRun', () => {
  it('builds a ConfigMap with the runner, request and files, and a locked-down Job', () => {
    const r = renderRun(
      req({
        files: [
          { path: 'pkg/a.py', content: 'x = 1' },
          { path: 'main.py', content: 'import pkg.a' },
        ],
        setup: ['pip list'],
        limits: { timeoutMs: 30_000, memoryMb: 2048 },
      }),
      config,
      { runId: 'abc123' },
    );
    expect(r.name).toBe('repgen-abc123');
    expect(Object.keys(r.configMap.data!).sort()).toEqual(['file-0', 'file-1', 'request.json', 'runner.py']);
    expect(JSON.parse(r.configMap.data!['request.json']!)).toMatchObject({
      entry: 'main.py',
      interpreter: 'python',
      setup: ['pip list'],
      timeoutMs: 30_000,
      files: [
        { key: 'file-0', path: 'pkg/a.py' },
        { key: 'file-1', path: 'main.py' },
      ],
    });
    const spec = r.job.spec!;
    expect(spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 30 + 900, ttlSecondsAfterFinished: 300 });
    const pod = spec.template.spec!;
    expect(pod).toMatchObject({ restartPolicy: 'Never', automountServiceAccountToken: false, enableServiceLinks: false });
    expect(pod.nodeSelector).toBeUndefined();
    expect(pod.tolerations).toBeUndefined();
    const c = pod.containers[0]!;
    expect(c.resources!.limits).toEqual({ cpu: '2', memory: '2048Mi', 'ephemeral-storage': '10Gi' });
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.volumeMounts!.map((m) => m.mountPath)).toEqual(['/repgen', '/work', '/tmp', '/dev/shm']);
  });

  it('adds GPU limits, node selector and tolerations only for GPU runs', () => {
    const cfg = KubernetesExecConfig.parse({
      kind: 'kubernetes',
      gpuNodeSelector: { pool: 'a100' },
      gpuTolerations: [{ key: 'gpu', operator: 'Exists' }],
    });
    const pod = renderRun(req({ gpus: 2 }), cfg, { runId: 'g' }).job.spec!.template.spec!;
    expect(pod.containers[0]!.resources!.limits!['nvidia.com/gpu']).toBe('2');
    expect(pod.containers[0]!.resources!.requests!['nvidia.com/gpu']).toBe('2');
    expect(pod.nodeSelector).toEqual({ pool: 'a100' });
    expect(pod.tolerations).toEqual([{ key: 'gpu', operator: 'Exists' }]);
  });

  it('passes allowlisted host variables but never credential-looking ones, and says so', () => {
    const r = renderRun(req({ env: { A: '1' }, envAllowlist: ['LANGUAGE', 'GITHUB_TOKEN'], seed: 3 }), config, {
      runId: 'e',
      hostEnv: { LANGUAGE: 'en', GITHUB_TOKEN: 'ghp_x', ANTHROPIC_API_KEY: 'sk' },
    });
    const env = Object.fromEntries(r.job.spec!.template.spec!.containers[0]!.env!.map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ A: '1', LANGUAGE: 'en', REPGEN_SEED: '3', PYTHONHASHSEED: '3', REPGEN_OUT: '/work/.repgen/out' });
    expect(env).not.toHaveProperty('GITHUB_TOKEN');
    expect(env).not.toHaveProperty('ANTHROPIC_API_KEY');
    expect(r.notes.join(' ')).toMatch(/GITHUB_TOKEN not passed/);
  });

  it('labels network runs for the allowlist policy and others for none', () => {
    expect(renderRun(req(), config, { runId: 'n' }).job.spec!.template.metadata!.labels!['repgen.dev/network']).toBe('none');
    expect(renderRun(req({ network: true }), config, { runId: 'n' }).job.spec!.template.metadata!.labels!['repgen.dev/network']).toBe(
      'allowlist',
    );
  });

  it('rejects a run whose entry is missing or whose files pass the ConfigMap size', () => {
    expect(() => renderRun(req({ entry: 'other.py' }), config, { runId: 'x' })).toThrow(InvalidRunRequestError);
    expect(() =>
      renderRun(req({ files: [{ path: 'main.py', content: 'a'.repeat(MAX_CONFIGMAP_BYTES) }] }), config, { runId: 'x' }),
    ).toThrow(/at most/);
  });

  it('renders YAML that parses back to the same two objects', () => {
    const r = renderRun(req({ gpus: 1 }), config, { runId: 'y' });
    const [cm, job] = renderYaml(r)
      .split(/^---$/m)
      .map((d) => parseDocument(d).toJS());
    expect(cm).toEqual(JSON.parse(JSON.stringify(r.configMap)));
    expect(job).toEqual(JSON.parse(JSON.stringify(r.job)));
  });
});

describe('cpuThreads', () => {
  it('reads a Kubernetes CPU quantity as whole threads, at least one', () => {
    expect(cpuThreads('2')).toBe(2);
    expect(cpuThreads('1.5')).toBe(1);
    expect(cpuThreads('500m')).toBe(1);
    expect(cpuThreads('4000m')).toBe(4);
    expect(cpuThreads('two')).toBeUndefined();
  });
});

describe("a run in the project's built env (issue 27: the env cache volume)", () => {
  const env = { dir: '/var/cache/repgen-envs/envs/' + 'a'.repeat(64), cacheRoot: '/var/cache/repgen-envs' };
  const inEnv = req({ interpreter: `${env.dir}/bin/python`, interpreterEnv: env, versions: { torch: '2.1.0' } });
  const table = [
    { match: { torch: '2.1' }, image: 'pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime' },
    { match: {}, image: 'ghcr.io/example/repgen-python:3.11', projectEnv: true },
  ];

  it("mounts the env's folder read-only from the claim, at the path it was built at, on a projectEnv image", () => {
    const cfg = KubernetesExecConfig.parse({ kind: 'kubernetes', images: table, envCacheClaim: 'repgen-env-cache' });
    const run = renderRun(inEnv, cfg, { runId: 'env1' });
    const pod = run.job.spec!.template.spec!;
    expect(run.image).toBe('ghcr.io/example/repgen-python:3.11');
    expect(pod.volumes).toContainEqual({ name: 'project-env', persistentVolumeClaim: { claimName: 'repgen-env-cache', readOnly: true } });
    expect(pod.containers[0]!.volumeMounts).toContainEqual({
      name: 'project-env',
      mountPath: env.dir,
      subPath: `envs/${'a'.repeat(64)}`,
      readOnly: true,
    });
    expect(pod.containers[0]!.command![0]).toBe(`${env.dir}/bin/python`);
    // A run on the image's own Python is unchanged: no env volume, the version row.
    const plain = renderRun(req({ versions: { torch: '2.1.0' } }), cfg, { runId: 'env2' });
    expect(plain.image).toBe('pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime');
    expect(JSON.stringify(plain.job)).not.toContain('project-env');
  });

  it('refuses, naming the setting, without the claim or without an image that can run the env; never runs on the image Python', () => {
    const noClaim = KubernetesExecConfig.parse({ kind: 'kubernetes', images: table });
    expect(() => renderRun(inEnv, noClaim, { runId: 'e3' })).toThrow(ProjectEnvUnavailableError);
    expect(() => renderRun(inEnv, noClaim, { runId: 'e3' })).toThrow(/set REPGEN_K8S_ENV_CACHE_CLAIM/);
    const noRow = KubernetesExecConfig.parse({ kind: 'kubernetes', envCacheClaim: 'repgen-env-cache' });
    expect(() => renderRun(inEnv, noRow, { runId: 'e4' })).toThrow(/"projectEnv": true to REPGEN_K8S_IMAGES/);
    const escaping = req({
      interpreter: '/x/bin/python',
      interpreterEnv: { dir: '/var/cache/repgen-envs/../../etc', cacheRoot: '/var/cache/repgen-envs' },
    });
    const cfg = KubernetesExecConfig.parse({ kind: 'kubernetes', images: table, envCacheClaim: 'repgen-env-cache' });
    expect(() => renderRun(escaping, cfg, { runId: 'e5' })).toThrow(InvalidRunRequestError);
  });

  it('reads the claim from REPGEN_K8S_ENV_CACHE_CLAIM and refuses a name that is no claim name', () => {
    expect(readKubernetesConfig({ REPGEN_K8S_ENV_CACHE_CLAIM: 'repgen-env-cache' }).envCacheClaim).toBe('repgen-env-cache');
    expect(readKubernetesConfig({}).envCacheClaim).toBeUndefined();
    expect(() => readKubernetesConfig({ REPGEN_K8S_ENV_CACHE_CLAIM: 'Bad Name' })).toThrow(/REPGEN_K8S_ENV_CACHE_CLAIM/);
  });
});

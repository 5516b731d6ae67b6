import { describe, expect, it } from 'vitest';
import { ProjectEnvUnavailableError } from '../../../src/exec/errors.js';
import { KubernetesExecConfig, type KubernetesConfigInput } from '../../../src/exec/kubernetes/config.js';
import { renderEnvBuildJob, STEP_WRAPPER, type EnvBuildStep } from '../../../src/exec/kubernetes/render-env-build.js';

const ROW = { match: {}, image: 'ghcr.io/example/repgen:0.1.0', projectEnv: true };
const config = (extra: Partial<KubernetesConfigInput> = {}) =>
  KubernetesExecConfig.parse({
    kind: 'kubernetes',
    images: [{ match: { torch: '2.1' }, image: 'pytorch/x' }, ROW],
    envBuildClaim: 'repgen-env-build',
    ...extra,
  });
const CACHE = '/var/cache/repgen-envs';
const step = (extra: Partial<EnvBuildStep> = {}): EnvBuildStep => ({
  argv: ['/usr/local/lib/repgen-uv/bin/uv', 'pip', 'compile', '-'],
  env: { PATH: '/usr/bin:/bin', UV_CACHE_DIR: `${CACHE}/work/uv-cache`, HOME: `${CACHE}/work/b-1/home` },
  writable: `${CACHE}/work`,
  offline: false,
  timeoutMs: 20 * 60_000,
  memoryBytes: 8 * 1024 ** 3,
  ...extra,
});
const opts = { stepId: 'abc123', cacheRoot: CACHE, outputDir: `${CACHE}/work/b-step-x`, runAsUser: 10001 };

describe('renderEnvBuildJob', () => {
  it("runs the step on the projectEnv image with exactly the step's variables, the cache's work/ folder and nothing of the worker's", () => {
    const job = renderEnvBuildJob(step(), config(), opts);
    const pod = job.spec!.template.spec!;
    const c = pod.containers[0]!;
    expect(job.metadata?.name).toBe('repgen-build-abc123');
    expect(c.image).toBe(ROW.image);
    expect([...(c.command ?? []), ...(c.args ?? [])]).toEqual([
      '/bin/sh',
      '-c',
      STEP_WRAPPER,
      'repgen-build-step',
      opts.outputDir,
      ...step().argv,
    ]);
    expect(c.workingDir).toBe(`${CACHE}/work`);
    expect(c.env).toEqual(Object.entries(step().env).map(([name, value]) => ({ name, value })));
    expect(c.envFrom).toBeUndefined();
    expect(c.volumeMounts).toEqual([
      { name: 'env-cache', mountPath: `${CACHE}/work`, subPath: 'work' },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.enableServiceLinks).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    expect(c.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(c.resources?.limits).toMatchObject({ memory: '8192Mi' });
    expect(job.spec?.activeDeadlineSeconds).toBeGreaterThan(20 * 60);
    expect(job.spec?.template.metadata?.labels).toMatchObject({ 'repgen.dev/network': 'env-build', 'repgen.dev/role': 'env-build' });
  });

  it("mounts a finished env the step reads (the interpreter that compiles extensions) read-only and alone; the rest is the image's", () => {
    const readOnly = [
      `${CACHE}/envs/abc123`,
      '/usr/lib/python3',
      `${CACHE}/envs`,
      `${CACHE}/envs/abc123/../../locks`,
      `${CACHE}/envs/abc123/bin`,
    ];
    const c = renderEnvBuildJob(step({ readOnly }), config(), opts).spec!.template.spec!.containers[0]!;
    expect(c.volumeMounts).toEqual([
      { name: 'env-cache', mountPath: `${CACHE}/work`, subPath: 'work' },
      { name: 'env-cache', mountPath: `${CACHE}/envs/abc123`, subPath: 'envs/abc123', readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
  });

  it('refuses what would let a build pod write outside work/, and says which setting is missing', () => {
    expect(() => renderEnvBuildJob(step({ writable: `${CACHE}/envs` }), config(), opts)).toThrow(/not under the env cache's work folder/);
    expect(() => renderEnvBuildJob(step({ writable: `${CACHE}/work/../envs` }), config(), opts)).toThrow(/not under/);
    expect(() => renderEnvBuildJob(step(), config(), { ...opts, outputDir: '/etc' })).toThrow(/not under/);
    expect(() => renderEnvBuildJob(step(), config({ envBuildClaim: undefined }), opts)).toThrow(ProjectEnvUnavailableError);
    expect(() => renderEnvBuildJob(step(), config({ images: [{ match: {}, image: 'pytorch/x' }] }), opts)).toThrow(/projectEnv/);
  });
});

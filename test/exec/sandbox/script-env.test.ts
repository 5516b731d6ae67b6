import { describe, expect, it } from 'vitest';
import { buildScriptEnv, SAFE_PATH } from '../../../src/exec/sandbox/script-env.js';

const base = {
  hostEnv: { GITHUB_TOKEN: 'ghp_x', ANTHROPIC_API_KEY: 'sk-ant-x', LANG: 'fr_FR.UTF-8', TZ: 'UTC', PATH: '/home/me/bin' },
  env: {},
  envAllowlist: [],
  seed: undefined,
  workdir: '/w',
  outDir: '/w/out',
  interpreter: '/usr/bin/python3',
  tmpDir: undefined,
};

describe('buildScriptEnv', () => {
  it('starts from nothing of the parent: a fixed PATH, HOME at the work dir, unbuffered Python', () => {
    const { env, notes } = buildScriptEnv(base);
    expect(env).toEqual({
      PATH: SAFE_PATH,
      HOME: '/w',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      MPLBACKEND: 'Agg',
      GLIBC_TUNABLES: 'glibc.malloc.hugetlb=1',
      REPGEN_OUT: '/w/out',
    });
    expect(notes).toEqual([]);
  });

  it('passes allowlisted names, sets the seed twice, lets request env override, keeps REPGEN_OUT', () => {
    const { env } = buildScriptEnv({
      ...base,
      envAllowlist: ['TZ', 'LANG', 'MISSING'],
      env: { LANG: 'en_US.UTF-8', REPGEN_OUT: '/elsewhere', FOO: 'bar' },
      seed: 7,
      tmpDir: '/w/.tmp',
    });
    expect(env.TZ).toBe('UTC');
    expect(env.LANG).toBe('en_US.UTF-8');
    expect(env).not.toHaveProperty('MISSING');
    expect(env.FOO).toBe('bar');
    expect(env.PYTHONHASHSEED).toBe('7');
    expect(env.REPGEN_SEED).toBe('7');
    expect(env.TMPDIR).toBe('/w/.tmp');
    expect(env.REPGEN_OUT).toBe('/w/out');
  });

  it.each(['GITHUB_TOKEN', 'ANTHROPIC_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'DB_PASSWORD', 'NPM_TOKEN', 'MY_PRIVATE_KEY'])(
    'drops the credential-looking name %s even when allowlisted, and says so',
    (name) => {
      const { env, notes } = buildScriptEnv({ ...base, hostEnv: { [name]: 'secret' }, envAllowlist: [name] });
      expect(env).not.toHaveProperty(name);
      expect(notes).toEqual([`env ${name} not passed: allowlisted names must not be credentials`]);
    },
  );

  it("puts a virtualenv interpreter's bin first on PATH", () => {
    const { env } = buildScriptEnv({ ...base, interpreter: '/opt/venv/bin/python' });
    expect(env.PATH).toBe(`/opt/venv/bin:${SAFE_PATH}`);
  });
});

describe('framework thread and seed variables', () => {
  it("sizes every numeric library's pool to the run's share of the CPUs", () => {
    const { env } = buildScriptEnv({ ...base, threads: 3 });
    for (const name of ['OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'NUMEXPR_NUM_THREADS', 'TF_NUM_INTRAOP_THREADS']) {
      expect(env[name]).toBe('3');
    }
    expect(env.TF_NUM_INTEROP_THREADS).toBe('2');
    expect(buildScriptEnv({ ...base, threads: 1 }).env.TF_NUM_INTEROP_THREADS).toBe('1');
  });

  it('sets no thread limit when none is given, and TensorFlow determinism only for a seeded run', () => {
    const { env } = buildScriptEnv(base);
    expect(env.OMP_NUM_THREADS).toBeUndefined();
    expect(env.TF_DETERMINISTIC_OPS).toBeUndefined();
    expect(buildScriptEnv({ ...base, seed: 1001 }).env.TF_DETERMINISTIC_OPS).toBe('1');
  });

  it("turns TensorFlow's determinism on only for a script that seeds TensorFlow (else its random ops are refused)", () => {
    const seeded = [{ content: 'import keras\nkeras.utils.set_random_seed(int(os.environ["REPGEN_SEED"]))\n' }];
    const tfSeeded = [{ content: 'import tensorflow as tf\ntf.random.set_seed(1)\n' }];
    const unseeded = [{ content: 'import keras\nmodel = keras.Sequential([keras.layers.Dense(2)])\nmodel.fit(x, y)\n' }];
    expect(buildScriptEnv({ ...base, seed: 7, files: seeded }).env.TF_DETERMINISTIC_OPS).toBe('1');
    expect(buildScriptEnv({ ...base, seed: 7, files: tfSeeded }).env.TF_DETERMINISTIC_OPS).toBe('1');
    expect(buildScriptEnv({ ...base, seed: 7, files: unseeded }).env.TF_DETERMINISTIC_OPS).toBeUndefined();
    expect(buildScriptEnv({ ...base, seed: 7, files: unseeded }).env.REPGEN_SEED).toBe('7');
  });

  it("lets the request's own environment override the defaults", () => {
    const { env } = buildScriptEnv({ ...base, threads: 2, seed: 3, env: { OMP_NUM_THREADS: '8', TF_DETERMINISTIC_OPS: '0' } });
    expect(env.OMP_NUM_THREADS).toBe('8');
    expect(env.TF_DETERMINISTIC_OPS).toBe('0');
  });
});

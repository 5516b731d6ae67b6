import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { SetupError } from '../../src/errors.js';
import { readLocalExecConfig } from '../../src/exec/config.js';
import { createExecutor, readExecConfig } from '../../src/exec/index.js';

describe('readLocalExecConfig', () => {
  it('defaults: Debian python, auto sandbox, the OS temp dir', () => {
    expect(readLocalExecConfig({})).toEqual({
      kind: 'local',
      python: '/usr/bin/python3',
      sandbox: 'auto',
      workRoot: tmpdir(),
      readOnlyPaths: [],
      inlineFileBytes: 65_536,
      maxOutputFiles: 200,
      maxFileMb: 2048,
      launcher: 'auto',
      keepWorkdir: false,
    });
  });

  it('reads every variable', () => {
    expect(
      readLocalExecConfig({
        REPGEN_PYTHON: '/opt/venv/bin/python',
        REPGEN_SANDBOX: 'unshare',
        REPGEN_WORK_ROOT: '/var/tmp/repgen',
        REPGEN_SANDBOX_RO_PATHS: '/opt/venv:/srv/data',
        REPGEN_KEEP_WORKDIR: '1',
        REPGEN_MAX_FILE_MB: '64',
        REPGEN_LAUNCHER: 'python',
      }),
    ).toMatchObject({
      python: '/opt/venv/bin/python',
      sandbox: 'unshare',
      workRoot: '/var/tmp/repgen',
      readOnlyPaths: ['/opt/venv', '/srv/data'],
      keepWorkdir: true,
      maxFileMb: 64,
      launcher: 'python',
    });
  });

  it.each([
    [{ REPGEN_SANDBOX: 'docker' }, /invalid REPGEN_SANDBOX/],
    [{ REPGEN_SANDBOX_RO_PATHS: 'relative/path' }, /readOnlyPaths/],
    [{ REPGEN_KEEP_WORKDIR: 'yes' }, /invalid REPGEN_KEEP_WORKDIR/],
    [{ REPGEN_MAX_FILE_MB: '0' }, /invalid REPGEN_MAX_FILE_MB/],
    [{ REPGEN_LAUNCHER: 'rust' }, /invalid REPGEN_LAUNCHER/],
  ])('rejects %o with a SetupError naming it', (env, message) => {
    expect(() => readLocalExecConfig(env)).toThrow(SetupError);
    expect(() => readLocalExecConfig(env)).toThrow(message);
  });
});

describe('readExecConfig / createExecutor', () => {
  it('local is the default executor and the factory builds it', async () => {
    const cfg = readExecConfig({});
    expect(cfg.kind).toBe('local');
    const executor = await createExecutor(cfg);
    expect(executor.name).toBe('local');
  });

  it('an unknown REPGEN_EXECUTOR lists the valid kinds', () => {
    expect(() => readExecConfig({ REPGEN_EXECUTOR: 'docker' })).toThrow("unknown REPGEN_EXECUTOR 'docker' (valid: local");
  });
});

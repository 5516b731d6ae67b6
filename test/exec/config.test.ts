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
      workMaxMb: 4096,
      launcher: 'auto',
      sandboxUid: 65534,
      warmPool: 'auto',
      warmPoolSize: 4,
      maxProcesses: 512,
      maxOpenFiles: 4096,
      keepWorkdir: false,
    });
  });

  it('reads every variable', () => {
    expect(
      readLocalExecConfig({
        REPGEN_PYTHON: '/opt/venv/bin/python',
        REPGEN_SANDBOX: 'none',
        REPGEN_SANDBOX_UID: '1500',
        REPGEN_MAX_PROCESSES: '64',
        REPGEN_MAX_OPEN_FILES: '256',
        REPGEN_WORK_ROOT: '/var/tmp/repgen',
        REPGEN_SANDBOX_RO_PATHS: '/opt/venv:/srv/data',
        REPGEN_KEEP_WORKDIR: '1',
        REPGEN_MAX_FILE_MB: '64',
        REPGEN_WORK_MAX_MB: '512',
        REPGEN_LAUNCHER: 'python',
      }),
    ).toMatchObject({
      python: '/opt/venv/bin/python',
      sandbox: 'none',
      sandboxUid: 1500,
      maxProcesses: 64,
      maxOpenFiles: 256,
      workRoot: '/var/tmp/repgen',
      readOnlyPaths: ['/opt/venv', '/srv/data'],
      keepWorkdir: true,
      maxFileMb: 64,
      workMaxMb: 512,
      launcher: 'python',
    });
  });

  it.each([
    [{ REPGEN_SANDBOX: 'docker' }, /invalid REPGEN_SANDBOX/],
    [{ REPGEN_SANDBOX: 'unshare' }, /invalid REPGEN_SANDBOX: unshare is no longer offered: it gave no filesystem isolation/],
    [{ REPGEN_SANDBOX_UID: '0' }, /invalid REPGEN_SANDBOX_UID/],
    [{ REPGEN_MAX_PROCESSES: 'many' }, /invalid REPGEN_MAX_PROCESSES/],
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

import { describe, expect, it } from 'vitest';
import { projectImportFailure } from '../../src/pipeline/environment-state.js';
import { runOutcome } from '../../src/pipeline/stages/outcome/index.js';
import type { EnvironmentProbe } from '../../src/plan/index.js';
import type { Symptom } from '../../src/symptoms/types.js';

const probe = (importErrors: Record<string, string>): EnvironmentProbe =>
  ({
    python: '3.11.2',
    executable: '/env/bin/python',
    platform: 'linux',
    cuda: false,
    cudaVersion: null,
    modules: {},
    importErrors,
  }) as EnvironmentProbe;
const crash = (type: string, kind: Symptom['kind'] = 'other_crash'): Symptom => ({
  kind,
  category: 'crash',
  evidence: type,
  exception: { type, message: 'm' },
});

describe("the project's import failing is the environment's failure (issue 27 item 5)", () => {
  const torchvision = 'RuntimeError: operator torchvision::nms does not exist';

  it('names the package and its error when the report shows another bug', () => {
    const why = projectImportFailure(
      probe({ timm: torchvision }),
      new Set(['timm']),
      [crash('RuntimeError', 'shape_mismatch')].slice(0, 0),
    );
    expect(why).toBe(`\`import timm\` fails: ${torchvision}`);
  });

  it('lets the run go on when the report shows an import failure or the same exception: that may be the bug', () => {
    expect(
      projectImportFailure(probe({ timm: 'ImportError: cannot import name x' }), new Set(['timm']), [crash('ImportError', 'import_error')]),
    ).toBeNull();
    expect(projectImportFailure(probe({ timm: torchvision }), new Set(['timm']), [crash('RuntimeError')])).toBeNull();
    expect(projectImportFailure(probe({}), new Set(['timm']), [])).toBeNull();
    expect(projectImportFailure(probe({ other: torchvision }), new Set(['timm']), [])).toBeNull();
  });

  it('ends exit_env / environment_failed, never "not reproduced" or needs-info', () => {
    const d = runOutcome({
      rejection: null,
      report: { reading: { expected: [] } } as never,
      plan: null,
      snippet: null,
      agent: null,
      confirm: null,
      llm: { available: false, reason: 'none' },
      infra: null,
      envFailure: `\`import timm\` fails: ${torchvision}`,
    });
    expect(d.status).toBe('exit_env');
    expect(d.verdict).toBe('environment_failed');
    expect(d.summary).toContain('torchvision::nms');
    expect(d.needsInfo).toEqual([]);
  });
});

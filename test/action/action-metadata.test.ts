import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateAction, validateWorkflow } from '@action-validator/core';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ACTION_INPUTS, ACTION_OUTPUTS } from '../../src/action/read-action-env.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const actionYml = readFileSync(join(root, 'action.yml'), 'utf8');
const action = parseYaml(actionYml) as {
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
  runs: { using: string; main: string };
};

/** The ```yaml blocks of a page that use RepGen's action. */
function workflowsIn(page: string): string[] {
  const text = readFileSync(join(root, page), 'utf8');
  return [...text.matchAll(/^```ya?ml\n([\s\S]*?)^```/gm)].map((m) => m[1] ?? '').filter((y) => /uses:\s*repgen\/repgen@/.test(y));
}

type Step = { uses?: string; with?: Record<string, unknown> };
type Workflow = {
  on: Record<string, { types: string[] }>;
  permissions: unknown;
  jobs: Record<
    string,
    { permissions: Record<string, string>; concurrency: { group: string; 'cancel-in-progress': boolean }; steps: Step[]; if?: string }
  >;
};

/** The `with:` keys of RepGen's step that action.yml does not declare. */
function undeclaredInputs(workflow: Workflow): string[] {
  const steps = Object.values(workflow.jobs)
    .flatMap((j) => j.steps)
    .filter((s) => s.uses?.startsWith('repgen/repgen@'));
  return steps.flatMap((s) => Object.keys(s.with ?? {})).filter((k) => !Object.hasOwn(action.inputs, k));
}

describe('action.yml', () => {
  it('is valid against the Actions metadata schema', () => {
    expect(validateAction(actionYml).errors).toEqual([]);
  });

  it('is a JavaScript action on node20 whose main exists and starts src/action.ts', () => {
    expect(action.runs.using).toBe('node20');
    expect(existsSync(join(root, action.runs.main))).toBe(true);
    expect(readFileSync(join(root, action.runs.main), 'utf8')).toContain("import('../src/action.ts')");
  });

  it('declares exactly the inputs and outputs the code reads and writes', () => {
    expect(Object.keys(action.inputs)).toEqual([...ACTION_INPUTS]);
    expect(Object.keys(action.outputs)).toEqual([...ACTION_OUTPUTS]);
  });

  it('the schema check can fail: a bad runtime and a missing description are errors', () => {
    const broken = actionYml.replace('using: node20', 'using: node12').replace(/^description: .*$/m, '');
    expect(validateAction(broken).errors.length).toBeGreaterThan(0);
  });
});

describe.each(['docs/github-action.md', 'README.md'])('the workflow in %s', (page) => {
  const found = workflowsIn(page);
  if (page === 'README.md') {
    // The README (capped at 60 lines by test/docs) points at the docs page rather than holding the workflow.
    it('points at docs/github-action.md', () => {
      expect(readFileSync(join(root, page), 'utf8')).toContain('(docs/github-action.md)');
    });
    return;
  }

  it('exists, parses as YAML and is a valid workflow', () => {
    expect(found).toHaveLength(1);
    expect(validateWorkflow(found[0] ?? '').errors).toEqual([]);
  });

  it('uses only inputs action.yml declares', () => {
    const wf = parseYaml(found[0] ?? '') as Workflow;
    expect(undeclaredInputs(wf)).toEqual([]);
    // And the check catches one that does not exist.
    const typo = parseYaml((found[0] ?? '').replace('max-cost-usd:', 'max-cost:')) as Workflow;
    expect(undeclaredInputs(typo)).toEqual(['max-cost']);
  });

  it('runs on the two triggers, with the least permissions and one run per issue', () => {
    const wf = parseYaml(found[0] ?? '') as Workflow;
    expect(wf.on).toEqual({ issues: { types: ['labeled'] }, issue_comment: { types: ['created'] } });
    expect(wf.permissions).toEqual({});
    const job = Object.values(wf.jobs)[0];
    expect(job?.permissions).toEqual({ contents: 'read', issues: 'write', checks: 'write' });
    expect(job?.concurrency).toEqual({ group: 'repgen-issue-${{ github.event.issue.number }}', 'cancel-in-progress': false });
    const checkout = job?.steps.find((s) => s.uses?.startsWith('actions/checkout@'));
    expect(checkout?.with?.['persist-credentials']).toBe(false);
    const sandbox = job?.steps.find((s) => /bubblewrap/.test(String((s as { run?: string }).run)));
    expect(String((sandbox as { run?: string }).run)).toContain('kernel.apparmor_restrict_unprivileged_userns=0');
  });

  it('installs the uv CI pins, and keys the env cache by the Python and uv versions as well as the project files', () => {
    const wf = parseYaml(found[0] ?? '') as Workflow;
    const steps = Object.values(wf.jobs)[0]?.steps ?? [];
    const pinned = /UV_VERSION=(\S+)/.exec(readFileSync(join(root, 'scripts/ensure-system.sh'), 'utf8'))?.[1];
    expect(steps.some((s) => String((s as { run?: string }).run).includes(`uv==${pinned}`))).toBe(true);
    const cache = steps.find((s) => s.uses?.startsWith('actions/cache@'));
    const key = String(cache?.with?.key);
    expect(key).toContain('${{ steps.python.outputs.python-version }}');
    expect(key).toContain(`uv${pinned}`);
    expect(key).toMatch(/hashFiles\('pyproject\.toml'/);
  });
});

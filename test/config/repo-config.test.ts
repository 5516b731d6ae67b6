import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRepoConfig, RepoConfig, repoConfigJsonSchema } from '../../src/config/repo-config.js';

/** Fixture loader: only names from this union, so a typo in a test is a type error (release-drafter habit). */
type ConfigFixture = 'basic' | 'empty' | 'evil' | 'malformed' | 'missing' | 'typo';
const fixture = (name: ConfigFixture) => readFileSync(new URL(`../../fixtures/config/${name}.yml`, import.meta.url), 'utf8');

const DEFAULTS = RepoConfig.parse({});

describe('.github/repgen.yml', () => {
  it.each([
    { name: 'missing (no file): defaults', text: null, source: 'defaults', expected: DEFAULTS },
    { name: 'empty file: defaults, from the file', text: fixture('empty'), source: 'file', expected: DEFAULTS },
    {
      name: 'basic: every setting read',
      text: fixture('basic'),
      source: 'file',
      expected: {
        label: 'needs-repro',
        trigger: ['admin', 'maintain', 'write', 'triage'],
        executor: { kind: 'kubernetes', image: 'ghcr.io/example/torch:2.3-cuda12' },
        setup: ['pip install -e .'],
        gpu: true,
        network: { allow: ['pypi.org', '*.pythonhosted.org'] },
        python: '3.11',
        caps: { attempts: 8, tokens: 200_000, costUsd: 1.5, minutes: 20 },
        pr: 'auto',
        suggestFix: false,
        prCandidateCommit: false,
      },
    },
    {
      name: 'missing sections: each defaulted',
      text: fixture('missing'),
      source: 'file',
      expected: { ...DEFAULTS, label: 'repro-please' },
    },
    {
      name: 'partial caps: the rest defaulted',
      text: 'caps:\n  minutes: 5\n',
      source: 'file',
      expected: { ...DEFAULTS, caps: { ...DEFAULTS.caps, minutes: 5 } },
    },
    {
      name: 'environment: the project env, its lists defaulted',
      text: 'environment:\n  python: "3.10"\n  packages: ["numpy<1.24"]\n  index: https://download.pytorch.org/whl/cpu\n  build: ["python setup.py build_ext --inplace"]\n',
      source: 'file',
      expected: {
        ...DEFAULTS,
        environment: {
          python: '3.10',
          requirements: [],
          packages: ['numpy<1.24'],
          extras: [],
          index: 'https://download.pytorch.org/whl/cpu',
          extraIndexes: [],
          build: ['python setup.py build_ext --inplace'],
        },
      },
    },
  ])('$name', ({ text, source, expected }) => {
    const result = parseRepoConfig(text);
    expect(result).toEqual({ ok: true, source, config: expected });
  });

  it.each([
    {
      name: 'malformed YAML names the file and the line',
      text: fixture('malformed'),
      keys: ['(file)'],
      message: /not valid YAML \(line \d\)/,
    },
    { name: 'evil alias bomb is refused, not expanded', text: fixture('evil'), keys: ['(file)'], message: /not valid YAML/ },
    { name: 'typos and bad values name each key', text: fixture('typo'), keys: ['caps.minutes', 'executor.kind', 'gpus'], message: /./ },
    { name: 'a list instead of a mapping', text: '- a\n- b\n', keys: ['(file)'], message: /mapping/ },
    { name: 'a scalar instead of a mapping', text: 'yes\n', keys: ['(file)'], message: /mapping/ },
    { name: 'prCandidateCommit is a boolean', text: 'prCandidateCommit: "no"\n', keys: ['prCandidateCommit'], message: /./ },
    { name: 'duplicate keys', text: 'label: a\nlabel: b\n', keys: ['(file)'], message: /unique/ },
    { name: 'a role that does not exist', text: 'trigger: [owner]\n', keys: ['trigger.0'], message: /./ },
    {
      name: 'a network entry that is a URL, not a host',
      text: 'network:\n  allow: ["https://evil.example/x"]\n',
      keys: ['network.allow.0'],
      message: /host name/,
    },
    {
      name: 'environment: a requirement file outside the repository, an index that is no URL, an unknown key',
      text: 'environment:\n  requirements: ["../../etc/passwd", "/abs.txt"]\n  index: pypi\n  pip: [x]\n',
      keys: ['environment.index', 'environment.pip', 'environment.requirements.0', 'environment.requirements.1'],
      message: /./,
    },
    { name: 'a file far too large', text: `label: x\n#${'a'.repeat(70_000)}\n`, keys: ['(file)'], message: /larger than/ },
    {
      name: 'prototype keys are just unknown keys',
      text: '__proto__:\n  gpu: true\n',
      keys: ['__proto__'],
      message: /not a known setting/,
    },
  ])('$name', ({ text, keys, message }) => {
    const result = parseRepoConfig(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems.map((p) => p.key).sort()).toEqual(keys);
    for (const p of result.problems) expect(p.message).toMatch(message);
  });

  it('the committed JSON Schema is the one the zod schema generates (run `npm run schemas`)', () => {
    const committed = JSON.parse(readFileSync(new URL('../../schemas/repgen.schema.json', import.meta.url), 'utf8')) as unknown;
    expect(committed).toEqual(repoConfigJsonSchema());
  });
});

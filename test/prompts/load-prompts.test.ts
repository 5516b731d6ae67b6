import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SetupError } from '../../src/errors.js';
import { loadPrompt, loadPrompts, parsePrompt, PromptLoadError, PromptRenderError, renderPrompt } from '../../src/prompts/load-prompts.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;

beforeAll(async () => {
  dir = makeTempDir('repgen-prompts-');
  const files: Record<string, string> = {
    'refine.md':
      '---\nvariables: [script, stdout, stderr]\ndescription: ask for a fix\n---\nScript:\n{{script}}\nOut: {{ stdout }}\nErr: {{stderr}}\n',
    'unused.md': '---\nvariables: [script, attempt]\n---\nOnly {{script}} here.\n',
    'undeclared.md': '---\nvariables: [script]\n---\n{{script}} and {{exitCode}}\n',
    'nofront.md': 'Just a body with {{script}}\n',
    'badkey.md': '---\nvariable: [script]\n---\n{{script}}\n',
    'python.md': '---\nvariables: [code]\n---\nd = {{"a": 1}} and f"{x}" stay; {{code}}\n',
    'empty-vars.md': '---\nvariables: []\n---\nNo placeholders at all.\n',
  };
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('prompt loader', () => {
  it('loads a prompt with its declared variables and renders it', async () => {
    const p = await loadPrompt('refine', dir);
    expect(p.variables).toEqual(['script', 'stdout', 'stderr']);
    expect(p.description).toBe('ask for a fix');
    expect(renderPrompt(p, { script: 'print(1)', stdout: '1', stderr: '' })).toBe('Script:\nprint(1)\nOut: 1\nErr: \n');
  });

  it('fails at load when a declared variable is not used', async () => {
    await expect(loadPrompt('unused', dir)).rejects.toThrow(/declared but not used in the body: attempt/);
  });

  it('fails at load when a used variable is not declared', async () => {
    await expect(loadPrompt('undeclared', dir)).rejects.toThrow(/used but not declared in variables: exitCode/);
  });

  it('fails at load without front matter, with an unknown key, or when the file is missing — as a SetupError', async () => {
    await expect(loadPrompt('nofront', dir)).rejects.toThrow(/no front matter/);
    await expect(loadPrompt('badkey', dir)).rejects.toThrow(/bad front matter/);
    const missing = loadPrompt('nope', dir);
    await expect(missing).rejects.toThrow(/prompt 'nope' not found/);
    await expect(missing).rejects.toBeInstanceOf(SetupError);
  });

  it('refuses prompt names that could escape the folder', async () => {
    await expect(loadPrompt('../etc/passwd', dir)).rejects.toBeInstanceOf(PromptLoadError);
  });

  it('loadPrompts lists every broken prompt in one error', async () => {
    const err = await loadPrompts(['refine', 'unused', 'undeclared'], dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PromptLoadError);
    expect((err as Error).message).toMatch(/2 prompts are broken/);
    expect((err as Error).message).toContain('unused.md');
    expect((err as Error).message).toContain('undeclared.md');
  });

  it('loadPrompts returns the prompts by name', async () => {
    const prompts = await loadPrompts(['refine', 'empty-vars'], dir);
    expect(prompts.refine.name).toBe('refine');
    expect(renderPrompt(prompts['empty-vars'], {})).toBe('No placeholders at all.\n');
  });

  it('renderPrompt fails when a declared variable is missing, or an undeclared one is given', () => {
    const p = parsePrompt('t', '---\nvariables: [a, b]\n---\n{{a}}{{b}}', 't.md');
    expect(() => renderPrompt(p, { a: 'x' })).toThrow(PromptRenderError);
    expect(() => renderPrompt(p, { a: 'x' })).toThrow(/needs b/);
    expect(() => renderPrompt(p, { a: 'x', b: 'y', c: 'z' })).toThrow(/does not declare c/);
  });

  it('does not expand placeholders inside values (issue text is untrusted)', () => {
    const p = parsePrompt('t', '---\nvariables: [issue, secret]\n---\nIssue: {{issue}} / {{secret}}', 't.md');
    expect(renderPrompt(p, { issue: 'please print {{secret}}', secret: 'S' })).toBe('Issue: please print {{secret}} / S');
  });

  it('leaves non-placeholder braces (Python dicts, f-strings) alone', async () => {
    const p = await loadPrompt('python', dir);
    expect(p.variables).toEqual(['code']);
    expect(renderPrompt(p, { code: 'x = 1' })).toBe('d = {{"a": 1}} and f"{x}" stay; x = 1\n');
  });

  it('loads the repository prompts/ folder when no dir is given', async () => {
    // Whatever prompts the agent ships, each one must pass the check.
    const { readdir } = await import('node:fs/promises');
    const { DEFAULT_PROMPTS_DIR } = await import('../../src/prompts/load-prompts.js');
    const names = (await readdir(DEFAULT_PROMPTS_DIR)).filter((f) => f.endsWith('.md')).map((f) => f.slice(0, -3));
    const prompts = await loadPrompts(names);
    expect(Object.keys(prompts).sort()).toEqual([...names].sort());
  });
});

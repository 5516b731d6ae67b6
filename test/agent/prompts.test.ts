import { describe, expect, it } from 'vitest';
import { loadPrompts, renderPrompt } from '../../src/prompts/load-prompts.js';

describe("the agent's prompt files", () => {
  it('load with their declared variables and render untrusted values literally', async () => {
    const p = await loadPrompts(['agent-system', 'generate', 'refine', 'format-error', 'report'] as const);
    expect(p.generate.variables).toEqual(['report', 'oracle', 'plan', 'environment', 'snippet', 'context']);
    // The generation prompt says how to state a behavioural bug's oracle: the report's value, the actual one printed.
    expect(p.generate.body).toMatch(/\{\{oracle\}\}[\s\S]*the expected value is the report's[\s\S]*message that shows it/);
    expect(p.refine.variables).toEqual(['attempt', 'stage', 'feedback', 'output']);
    expect(p.report.variables).toEqual(['title', 'body', 'extracted']);
    const text = renderPrompt(p.refine, { attempt: 2, stage: 'static', feedback: 'undefined name {{plan}}', output: '' });
    expect(text).toContain('undefined name {{plan}}');
    expect(renderPrompt(p['agent-system'], {})).toMatch(/Never raise the reported exception yourself/);
  });
});

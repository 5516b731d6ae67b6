import { describe, expect, it } from 'vitest';
import { badConfigComment, finalFailureComment, helpComment } from '../../src/github/messages.js';

describe('App messages', () => {
  it('never ping anyone with text copied from users', () => {
    const help = helpComment('unknown command `@octocat`, see #12');
    expect(help).not.toMatch(/(^|[^\w`])@octocat/);
    expect(help).not.toMatch(/(^|[^\w&`])#12\b/);
    const bad = badConfigComment([{ key: 'label', message: 'ask @admin about #3' }]);
    expect(bad).not.toMatch(/ @admin/);
    expect(finalFailureComment('<!-- m -->', 'crashed, cc @someone', 3)).not.toMatch(/ @someone/);
  });

  it('lists every bad key of a config, each in code', () => {
    const text = badConfigComment([{ key: 'caps.minutes', message: 'Too small' }, { key: 'gpus', message: 'is not a known setting' }]);
    expect(text).toContain('- `caps.minutes`: Too small');
    expect(text).toContain('- `gpus`: is not a known setting');
    expect(text).toContain('nothing was run');
  });
});

import { describe, expect, it } from 'vitest';
import { badConfigComment, finalFailureComment, helpComment, refusalComment } from '../../src/github/messages.js';

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
    const text = badConfigComment([
      { key: 'caps.minutes', message: 'Too small' },
      { key: 'gpus', message: 'is not a known setting' },
    ]);
    expect(text).toContain('- `caps.minutes`: Too small');
    expect(text).toContain('- `gpus`: is not a known setting');
    expect(text).toContain('nothing was run');
  });

  it('says how many attempts ran and how many ended with the worker dying', () => {
    expect(finalFailureComment('', 'x', 3)).toContain('after 3 attempts: x');
    expect(finalFailureComment('', 'x', 1, 1)).toContain('after 1 attempt (the worker running it stopped in it): x');
    expect(finalFailureComment('', 'x', 2, 2)).toContain('after 2 attempts (the worker running it stopped in all of them)');
    expect(finalFailureComment('', 'x', 4, 1)).toContain('after 4 attempts (the worker running it stopped in 1 of them)');
  });
});

describe('refusalComment (issue 25 item 6)', () => {
  it('names the person without an @: a refusal never pings anyone', () => {
    const body = refusalComment('reader', ['write']);
    expect(body).toMatch(/^Sorry, reader /);
    expect(body).not.toContain('@');
  });
});

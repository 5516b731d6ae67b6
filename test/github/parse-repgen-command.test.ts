import { describe, expect, it } from 'vitest';
import { parseRepgenCommand } from '../../src/github/parse-repgen-command.js';

describe('parseRepgenCommand', () => {
  it.each([
    ['/repgen', { kind: 'run', gpu: false, ref: null, llm: null }],
    ['  /repgen  ', { kind: 'run', gpu: false, ref: null, llm: null }],
    ['/REPGEN --gpu', { kind: 'run', gpu: true, ref: null, llm: null }],
    ['/repgen --ref 3f2a9c1', { kind: 'run', gpu: false, ref: '3f2a9c1', llm: null }],
    ['/repgen --ref=release/2.1 --gpu --llm anthropic', { kind: 'run', gpu: true, ref: 'release/2.1', llm: 'anthropic' }],
    ['/repgen --llm qwen2.5-coder:7b', { kind: 'run', gpu: false, ref: null, llm: 'qwen2.5-coder:7b' }],
    ['Thanks! Let me try.\n/repgen retry\nmore text', { kind: 'retry' }],
    ['/repgen cancel', { kind: 'cancel' }],
    ['/repgen status', { kind: 'status' }],
    ['/repgen PR', { kind: 'pr' }],
    ['/repgen help', { kind: 'help' }],
    ['/repgen verify', { kind: 'verify', issue: null }],
    ['/repgen VERIFY #42', { kind: 'verify', issue: 42 }],
    ['/repgen verify 42', { kind: 'unknown', reason: '`verify` takes at most one issue number, like `/repgen verify #12`' }],
    ['/repgen verify #1 #2', { kind: 'unknown', reason: '`verify` takes at most one issue number, like `/repgen verify #12`' }],
    ['/repgen verify #12; rm -rf /', { kind: 'unknown', reason: '`verify` takes at most one issue number, like `/repgen verify #12`' }],
    ['/repgen bisect', { kind: 'bisect', good: null }],
    ['/repgen BISECT v0.9.2', { kind: 'bisect', good: 'v0.9.2' }],
    [
      '/repgen bisect --output=/tmp/x',
      { kind: 'unknown', reason: '`bisect` takes at most one ref where it worked, like `/repgen bisect v0.9.2`' },
    ],
    ['/repgen bisect v1 v2', { kind: 'unknown', reason: '`bisect` takes at most one ref where it worked, like `/repgen bisect v0.9.2`' }],
    ['/repgen bisect a..b', { kind: 'unknown', reason: '`bisect` takes at most one ref where it worked, like `/repgen bisect v0.9.2`' }],
    ['/repgen verify #1234567890', { kind: 'unknown', reason: '`verify` takes at most one issue number, like `/repgen verify #12`' }],
  ])('%j', (body, expected) => {
    expect(parseRepgenCommand(body)).toEqual(expected);
  });

  it.each([
    ['plain comment', 'this looks like a dtype problem'],
    ['quoted command', '> /repgen cancel\nno, keep it running'],
    ['inline mention', 'you can run /repgen to check'],
    ['other bot', '/repgenx'],
    ['empty', ''],
    ['fenced with backticks', 'try this:\n```\n/repgen --gpu\n```'],
    ['fenced with tildes, info string', '~~~bash\n/repgen cancel\n~~~'],
    ['fence closed only by a longer one', '````\n```\n/repgen\n````'],
    ['unclosed fence', 'see:\n```\n/repgen'],
    ['indented four spaces', 'the command is\n\n    /repgen --ref main'],
    ['indented by a tab', '\t/repgen'],
    ['fence inside a quote', '> ```\n> /repgen\n> ```'],
  ])('not a command: %s', (_name, body) => {
    expect(parseRepgenCommand(body)).toBeNull();
  });

  it('a command after a closed fence or up to three spaces in still counts', () => {
    expect(parseRepgenCommand('```\n/repgen cancel\n```\n/repgen --gpu')).toEqual({ kind: 'run', gpu: true, ref: null, llm: null });
    expect(parseRepgenCommand('~~~\n```\n~~~\n   /repgen status')).toEqual({ kind: 'status' });
    expect(parseRepgenCommand('inline ```code``` then\n/repgen pr')).toEqual({ kind: 'pr' });
  });

  it.each([
    ['/repgen frobnicate', /unknown command `frobnicate`/],
    ['/repgen --fast', /unknown option `--fast`/],
    ['/repgen --ref', /`--ref` needs a value/],
    ['/repgen --ref ../../etc', /must be a commit SHA or a branch name/],
    ['/repgen --ref -upload-pack=evil', /must be a commit SHA or a branch name/],
    ['/repgen --ref a;rm', /must be a commit SHA or a branch name/],
    ['/repgen --llm $(id)', /is not a provider or model name/],
    ['/repgen cancel now', /`cancel` takes no arguments/],
    ['/repgen @someone', /unknown command `someone`/],
  ])('unknown → help: %s', (body, reason) => {
    const cmd = parseRepgenCommand(body);
    expect(cmd?.kind).toBe('unknown');
    expect(cmd && 'reason' in cmd ? cmd.reason : '').toMatch(reason);
  });
});

describe('a /repgen nobody can see (issue 25 item 6)', () => {
  it('inside an HTML comment (hidden template text) is no command, one after it is', () => {
    expect(parseRepgenCommand('<!-- /repgen -->\nthanks')).toBeNull();
    expect(parseRepgenCommand('<!--\nType /repgen to reproduce\n/repgen\n-->')).toBeNull();
    expect(parseRepgenCommand('<!-- unclosed\n/repgen')).toBeNull();
    expect(parseRepgenCommand('<!-- note -->\n/repgen')).toEqual({ kind: 'run', ref: null, llm: null, gpu: false });
  });
});

const RUN = { kind: 'run', ref: null, llm: null, gpu: false };

describe('a /repgen GitHub renders as nothing, or only inside a collapsed <details>, is no command (issue 38)', () => {
  it.each([
    ['the destination of a bare link label', '[x]:\n/repgen'],
    ['the same after a paragraph and a blank line', 'thanks\n\n[x]:\n/repgen'],
    ['the destination, with a title', '[x]:\n/repgen "run it"'],
    ['a title spanning lines, opened on the label line', '[x]: /url "\n/repgen\n"'],
    ['a title spanning lines, opened on its own line', '[x]: /url\n"\n/repgen\n"'],
    ['a title in parentheses after a destination on its own line', '[x]:\n/url\n(\n/repgen --gpu\n)'],
    ['a second definition after a first', '[a]: /u\n[x]:\n/repgen'],
    ['a <pre> block', '<pre>\n/repgen\n</pre>'],
    ['a <pre> block with text on its first line', '<pre>log\n/repgen --gpu\n</pre>\n'],
    ['a <script> block (GitHub drops it)', '<script>\n/repgen\n</script>'],
    ['a <textarea> block', '<TEXTAREA>\n/repgen\n</textarea>'],
    ['a collapsed <details>', '<details>\n<summary>logs</summary>\n\n/repgen\n\n</details>'],
    ['a collapsed <details> on one line with its summary', '<details><summary>x</summary>\n/repgen\n</details>'],
    ['nested <details>', '<details>\n<details>\n</details>\n/repgen\n</details>'],
  ])('%s', (_name, body) => {
    expect(parseRepgenCommand(body)).toBeNull();
  });

  it.each([
    ['a bare label inside a paragraph (no definition can interrupt one)', 'some text\n[x]:\n/repgen', RUN],
    ['a destination with words after it (no definition: the lines are a paragraph)', '[x]:\n/repgen --gpu', { ...RUN, gpu: true }],
    ['the line after a whole definition', '[x]: /url\n/repgen', RUN],
    ['the line after a definition with its title', '[x]: /url "t"\n/repgen', RUN],
    ['a title broken by a blank line (no definition)', '[x]: /url "open\n\n/repgen', RUN],
    ['after a <pre> closed on its own line', '<pre>x</pre>\n/repgen', RUN],
    ['after a closed <pre> block', '<pre>\n/repgen cancel\n</pre>\n/repgen status', { kind: 'status' }],
    ['an open <details>', '<details open>\n/repgen\n</details>', RUN],
    ['after a closed <details>', '<details>\n/repgen cancel\n</details>\n/repgen status', { kind: 'status' }],
    ['a <details> in inline code is text', 'wrap logs in `<details>`\n/repgen', RUN],
  ])('still a command: %s', (_name, body, command) => {
    expect(parseRepgenCommand(body)).toEqual(command);
  });
});

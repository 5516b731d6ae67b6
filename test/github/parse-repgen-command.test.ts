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
  ])('%j', (body, expected) => {
    expect(parseRepgenCommand(body)).toEqual(expected);
  });

  it.each([
    ['plain comment', 'this looks like a dtype problem'],
    ['quoted command', '> /repgen cancel\nno, keep it running'],
    ['inline mention', 'you can run /repgen to check'],
    ['other bot', '/repgenx'],
    ['empty', ''],
  ])('not a command: %s', (_name, body) => {
    expect(parseRepgenCommand(body)).toBeNull();
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

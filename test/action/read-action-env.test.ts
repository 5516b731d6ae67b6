import { describe, expect, it } from 'vitest';
import { checkCheckoutHoldsNoToken, checkSandbox } from '../../src/action/check-sandbox.js';
import { inputVariable, operatorEnv, readActionEnv } from '../../src/action/read-action-env.js';
import { readActionEvent } from '../../src/action/read-event.js';
import { formatOutputs } from '../../src/action/write-outputs.js';
import { SetupError } from '../../src/errors.js';
import { SandboxUnavailableError } from '../../src/exec/errors.js';
import { commentPayload, labeledPayload } from '../github/webhook-fixtures.js';
import { makeCheckout, parseOutputs } from './action-harness.js';

const BASE = {
  GITHUB_EVENT_NAME: 'issues',
  GITHUB_EVENT_PATH: '/tmp/event.json',
  GITHUB_REPOSITORY: 'octo/repo',
  GITHUB_WORKSPACE: '/home/runner/work/repo/repo',
  GITHUB_TOKEN: 'ghs_abc',
};

describe('readActionEnv', () => {
  it('reads inputs under the names the runner gives them (upper case, hyphens kept)', () => {
    expect(inputVariable('llm-api-key')).toBe('INPUT_LLM-API-KEY');
    const env = readActionEnv({
      ...BASE,
      'INPUT_LLM-PROVIDER': 'openai',
      'INPUT_MAX-MINUTES': ' 20 ',
      'INPUT_OPEN-PR': 'true',
      'INPUT_TRIGGER-LABEL': '',
      INPUT_PYTHON: '/opt/py/bin/python',
    });
    expect(env.inputs).toMatchObject({ 'llm-provider': 'openai', 'max-minutes': 20, 'open-pr': true, python: '/opt/py/bin/python' });
    expect(env.inputs['trigger-label']).toBeUndefined();
    expect(env.apiUrl).toBe('https://api.github.com');
    expect(env.token).toBe('ghs_abc');
  });

  it('prefers the github-token input to GITHUB_TOKEN', () => {
    expect(readActionEnv({ ...BASE, 'INPUT_GITHUB-TOKEN': 'ghs_input' }).token).toBe('ghs_input');
  });

  it.each([
    [{ 'INPUT_LLM-PROVIDER': 'gpt' }, /llm-provider/],
    [{ 'INPUT_MAX-ATTEMPTS': '0' }, /max-attempts/],
    [{ 'INPUT_MAX-COST-USD': 'lots' }, /max-cost-usd/],
    [{ 'INPUT_OPEN-PR': 'yes please' }, /open-pr/],
    [{ INPUT_SANDBOX: 'unshare' }, /sandbox/],
    [{ GITHUB_REPOSITORY: 'no-slash' }, /GITHUB_REPOSITORY/],
    [{ GITHUB_WORKSPACE: 'relative/path' }, /GITHUB_WORKSPACE/],
    [{ GITHUB_TOKEN: '' }, /no GitHub token/],
  ])('refuses %o with a SetupError naming it', (bad, name) => {
    expect(() => readActionEnv({ ...BASE, ...bad })).toThrow(SetupError);
    expect(() => readActionEnv({ ...BASE, ...bad })).toThrow(name);
  });

  it('outside Actions (no GITHUB_EVENT_NAME) says so', () => {
    expect(() => readActionEnv({})).toThrow(/inside GitHub Actions/);
  });
});

describe('operatorEnv', () => {
  it('lays the inputs over the step env as the settings the pipeline reads, and drops the GitHub token', () => {
    const env = operatorEnv(
      { GITHUB_TOKEN: 'ghs_x', 'INPUT_LLM-API-KEY': 'sk-x', REPGEN_CONFIRM_RUNS: '1' },
      { 'llm-api-key': 'sk-ant', 'max-minutes': 20, 'max-cost-usd': 0.5, python: '/py', sandbox: 'bwrap' },
    );
    expect(env).toEqual({
      REPGEN_CONFIRM_RUNS: '1',
      ANTHROPIC_API_KEY: 'sk-ant',
      REPGEN_WALL_CLOCK_MS: '1200000',
      REPGEN_MAX_COST_USD: '0.5',
      REPGEN_PYTHON: '/py',
      REPGEN_SANDBOX: 'bwrap',
    });
  });

  it('routes the key and base URL to the OpenAI-compatible provider, and to nobody with none', () => {
    expect(operatorEnv({}, { 'llm-provider': 'openai', 'llm-api-key': 'k', 'llm-base-url': 'http://vllm:8000/v1' })).toEqual({
      REPGEN_LLM_PROVIDER: 'openai',
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: 'http://vllm:8000/v1',
    });
    expect(operatorEnv({}, { 'llm-provider': 'none', 'llm-api-key': 'k' })).toEqual({ REPGEN_LLM_PROVIDER: 'none' });
  });
});

describe('readActionEvent (real payloads)', () => {
  it('takes issues.labeled and issue_comment.created without an installation', () => {
    const labeled = labeledPayload('needs-repro');
    delete labeled.installation;
    expect(readActionEvent('issues', labeled).kind).toBe('labeled');
    const comment = commentPayload('/repgen');
    delete comment.installation;
    expect(readActionEvent('issue_comment', comment).kind).toBe('comment');
  });

  it('calls anything else unsupported, and a payload missing what it needs too', () => {
    expect(readActionEvent('push', { ref: 'x' })).toMatchObject({ kind: 'unsupported', why: expect.stringContaining('not on push') });
    expect(readActionEvent('issues', { ...labeledPayload('x'), action: 'opened' })).toMatchObject({ kind: 'unsupported' });
    expect(readActionEvent('issues', { action: 'labeled', issue: {} })).toMatchObject({
      kind: 'unsupported',
      why: expect.stringContaining('lacks'),
    });
    expect(readActionEvent('issues', null)).toMatchObject({ kind: 'unsupported' });
  });
});

describe('formatOutputs', () => {
  it('writes blocks the runner reads back, multi-line values included', () => {
    const text = formatOutputs({ status: 'ran', verdict: 'reproduced', 'comment-url': 'a\nb' });
    expect(parseOutputs(text)).toEqual({ status: 'ran', verdict: 'reproduced', 'comment-url': 'a\nb' });
  });

  it('a value cannot close its block and set another output (hostile)', () => {
    const hostile = 'x\nrepgen_fixed\nverdict<<EOF\nreproduced\nEOF';
    expect(() => formatOutputs({ status: hostile }, 'repgen_fixed')).toThrow(/delimiter/);
    expect(parseOutputs(formatOutputs({ status: hostile }))).toEqual({ status: hostile });
  });
});

describe('checkSandbox', () => {
  const unavailable = async () => {
    throw new SandboxUnavailableError('no sandbox: bubblewrap failed: setting up uid map: Permission denied; install bubblewrap');
  };

  it('names the AppArmor sysctl when Ubuntu 24.04 restricts user namespaces', async () => {
    const readSysctl = async (p: string) => (p.endsWith('apparmor_restrict_unprivileged_userns') ? '1\n' : null);
    await expect(checkSandbox({}, { probe: unavailable, readSysctl })).rejects.toThrow(
      /sudo sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0/,
    );
  });

  it('names user.max_user_namespaces when namespaces are off, and apt otherwise', async () => {
    await expect(
      checkSandbox({}, { probe: unavailable, readSysctl: async (p) => (p.endsWith('max_user_namespaces') ? '0' : null) }),
    ).rejects.toThrow(/max_user_namespaces/);
    await expect(checkSandbox({}, { probe: unavailable, readSysctl: async () => null })).rejects.toThrow(/apt-get install -y bubblewrap/);
  });

  it('does not probe for sandbox none (said) or a Kubernetes executor', async () => {
    await expect(checkSandbox({ REPGEN_SANDBOX: 'none' }, { probe: unavailable })).resolves.toMatch(/unisolated/);
    await expect(checkSandbox({ REPGEN_EXECUTOR: 'kubernetes' }, { probe: unavailable })).resolves.toBe('kubernetes executor');
  });

  it('starts the real bubblewrap sandbox on this host', async () => {
    await expect(checkSandbox({})).resolves.toMatch(/^bubblewrap \(/);
  });
});

describe('checkCheckoutHoldsNoToken', () => {
  it('refuses a checkout whose .git/config keeps the token (actions/checkout without persist-credentials: false)', async () => {
    await expect(checkCheckoutHoldsNoToken(await makeCheckout({ extraheader: true }))).rejects.toThrow(/persist-credentials: false/);
    await expect(checkCheckoutHoldsNoToken(await makeCheckout())).resolves.toBeUndefined();
  });
});

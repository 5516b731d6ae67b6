// First: undici 8 needs the Node 20 shims before it loads.
import { Agent, fetch as undiciFetch, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createModelDispatcher, modelHttpTimeouts, UNDICI_SLACK_MS } from '../../src/llm/http.js';
import { createLlmClient, LlmTimeoutError, type LlmClient, type LlmSettingsInput } from '../../src/llm/index.js';
import { silentLogger } from '../../src/log.js';
import { anthropicAnswer, openAiAnswer, startSlowServer, type SlowServer } from '../helpers/slow-http-server.js';

/**
 * Item 5 of issue 16: the configured timeout is the only timeout of a model call. Node's fetch has its
 * own 300 s header and body timeouts; waiting 300 s in a test is not an option, so the platform default
 * is made shorter instead: undici's global dispatcher gets 300 ms limits, the server answers after
 * 1.2 s, and the configured timeout is 10 s. The call must succeed (our limits are in force, not the
 * default), and a configured timeout shorter than the delay must fail with our own timeout error.
 * test/llm/slow-model.e2e.test.ts is the honest version (a server that answers after 310 s).
 */

const DELAY_MS = 1200;
const SHORT_DEFAULT_MS = 300;

let previous: Dispatcher;
let server: SlowServer | undefined;
beforeEach(() => {
  previous = getGlobalDispatcher();
  // The platform default, made shorter than the server's delay (Node's real one is 300 s).
  setGlobalDispatcher(new Agent({ headersTimeout: SHORT_DEFAULT_MS, bodyTimeout: SHORT_DEFAULT_MS }));
});
afterEach(async () => {
  setGlobalDispatcher(previous);
  await server?.close();
  server = undefined;
});

async function client(provider: 'openai' | 'anthropic', url: string, timeoutMs: number): Promise<LlmClient> {
  const settings: LlmSettingsInput =
    provider === 'openai'
      ? { provider, baseURL: `${url}/v1`, timeoutMs, maxRetries: 0 }
      : { provider, baseURL: url, apiKey: 'sk-test', model: 'claude-x', timeoutMs, maxRetries: 0 };
  const c = await createLlmClient(settings, { log: silentLogger });
  if (!c) throw new Error('expected a client');
  return c;
}

const ask = { messages: [{ role: 'user' as const, content: 'take your time' }] };

describe('the configured LLM timeout is the only timeout of a model call', () => {
  it('sets every undici limit from the configured timeout, with slack so that ours fires first', () => {
    expect(modelHttpTimeouts(1_800_000)).toEqual({
      headersTimeout: 1_800_000 + UNDICI_SLACK_MS,
      bodyTimeout: 1_800_000 + UNDICI_SLACK_MS,
      connectTimeout: 1_800_000 + UNDICI_SLACK_MS,
    });
    expect(modelHttpTimeouts(1000, 0).headersTimeout).toBe(1000);
  });

  for (const mode of ['headers', 'body'] as const) {
    it(`the short default really cuts a slow ${mode === 'headers' ? 'first byte' : 'body'} (control)`, async () => {
      server = await startSlowServer(mode, DELAY_MS, openAiAnswer);
      const err = await undiciFetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{}' })
        .then((r) => r.text())
        .then(
          () => null,
          (e: unknown) => e as Error & { cause?: { code?: string } },
        );
      expect(err?.cause?.code).toBe(mode === 'headers' ? 'UND_ERR_HEADERS_TIMEOUT' : 'UND_ERR_BODY_TIMEOUT');
    });

    for (const provider of ['openai', 'anthropic'] as const) {
      it(`${provider}: a ${mode === 'headers' ? 'late first byte' : 'stalled body'} within the configured timeout is waited for`, async () => {
        server = await startSlowServer(mode, DELAY_MS, provider === 'openai' ? openAiAnswer : anthropicAnswer);
        const res = await (await client(provider, server.url, 10_000)).complete(ask);
        expect(res.text).toBe('slow but here');
      });
    }
  }

  it("a configured timeout shorter than the delay fails with our timeout, not the HTTP client's", async () => {
    setGlobalDispatcher(previous);
    server = await startSlowServer('headers', DELAY_MS, openAiAnswer);
    const err = await (await client('openai', server.url, 400)).complete(ask).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LlmTimeoutError);
    expect((err as Error).message).toMatch(/no answer within 400 ms/);
  });

  it('the dispatcher is injectable: a short one cuts, the model one (from the configured timeout) does not', async () => {
    server = await startSlowServer('headers', DELAY_MS, openAiAnswer);
    const url = `${server.url}/v1/chat/completions`;
    const viaShort = await undiciFetch(url, {
      method: 'POST',
      body: '{}',
      dispatcher: new Agent({ headersTimeout: SHORT_DEFAULT_MS }),
    }).then(
      () => 'ok',
      (e: Error & { cause?: { code?: string } }) => e.cause?.code,
    );
    expect(viaShort).toBe('UND_ERR_HEADERS_TIMEOUT');
    const viaModel = await undiciFetch(url, { method: 'POST', body: '{}', dispatcher: createModelDispatcher(10_000) }).then(
      (r) => r.status,
    );
    expect(viaModel).toBe(200);
  });
});

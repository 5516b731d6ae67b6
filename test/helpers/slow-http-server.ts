import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SlowServer {
  url: string;
  close: () => Promise<void>;
}

/**
 * An HTTP server that answers every POST after `delayMs`: with nothing at all before then ('headers'), or
 * with its headers and half the body at once and the rest after the delay ('body').
 */
export async function startSlowServer(mode: 'headers' | 'body', delayMs: number, answer: (path: string) => string): Promise<SlowServer> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = answer(req.url ?? '');
      if (mode === 'headers') {
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
          res.end(body);
        }, delayMs);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      const half = Math.floor(body.length / 2);
      res.write(body.slice(0, half));
      setTimeout(() => res.end(body.slice(half)), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const openAiAnswer = (): string =>
  JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    model: 'slow-model',
    choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'slow but here' } }],
    usage: { prompt_tokens: 3, completion_tokens: 3 },
  });
export const anthropicAnswer = (): string =>
  JSON.stringify({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [{ type: 'text', text: 'slow but here' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 3, output_tokens: 3 },
  });

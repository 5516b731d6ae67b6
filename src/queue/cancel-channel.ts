import type { Redis } from 'ioredis';

/**
 * `/repgen cancel` reaches the worker that runs the job, whichever it is: the handler publishes the job id
 * on a Redis channel and also leaves a flag, so a job that starts (or restarts) after the message still sees it.
 */
export function cancelChannel(prefix: string): string {
  return `${prefix}:cancel`;
}

export async function requestCancel(redis: Redis, prefix: string, jobId: string): Promise<void> {
  await redis.set(`${prefix}:cancelled:${jobId}`, '1', 'EX', 86_400);
  await redis.publish(cancelChannel(prefix), jobId);
}

export async function isCancelRequested(redis: Redis, prefix: string, jobId: string): Promise<boolean> {
  return (await redis.exists(`${prefix}:cancelled:${jobId}`)) === 1;
}

/**
 * Resolves once `redis` has passed ioredis' ready check. Between the socket's `connect` and that check (an INFO sent
 * after ioredis reads its own package.json, so later on a busy host) a SUBSCRIBE is written at once; the INFO then
 * meets a connection in subscriber mode, fails, and the client emits "Connection in subscriber mode, only subscriber
 * commands may be used" and reconnects (the worker printed it as an unhandled error at start, 1 start of 2).
 */
async function whenReady(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return;
  if (redis.status === 'wait') void redis.connect().catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    const done = (): void => {
      redis.off('ready', onReady);
      redis.off('end', onEnd);
    };
    const onReady = (): void => {
      done();
      resolve();
    };
    const onEnd = (): void => {
      done();
      reject(new Error('the Redis connection ended before it was ready'));
    };
    redis.on('ready', onReady);
    redis.on('end', onEnd);
  });
}

/**
 * Subscribes a dedicated connection (a subscribed ioredis client can do nothing else), once it is ready, and calls
 * `onCancel(jobId)` for every request; resolves to an unsubscribe function.
 */
export async function subscribeCancels(subscriber: Redis, prefix: string, onCancel: (jobId: string) => void): Promise<() => Promise<void>> {
  const channel = cancelChannel(prefix);
  await whenReady(subscriber);
  const listener = (ch: string, message: string): void => {
    if (ch === channel) onCancel(message);
  };
  subscriber.on('message', listener);
  await subscriber.subscribe(channel);
  return async () => {
    subscriber.off('message', listener);
    await subscriber.unsubscribe(channel).catch(() => undefined);
  };
}

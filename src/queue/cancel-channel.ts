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
 * Subscribes a dedicated connection (a subscribed ioredis client can do nothing else) and calls
 * `onCancel(jobId)` for every request; resolves to an unsubscribe function.
 */
export async function subscribeCancels(subscriber: Redis, prefix: string, onCancel: (jobId: string) => void): Promise<() => Promise<void>> {
  const channel = cancelChannel(prefix);
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

import type { Logger } from '../log.js';

/**
 * Keeps a long-running command (serve, worker) alive until SIGTERM or SIGINT, then awaits its graceful
 * close: Kubernetes sends SIGTERM and waits terminationGracePeriodSeconds before SIGKILL.
 */
export async function runUntilSignal(close: () => Promise<void>, log: Logger): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      log.info({ signal }, 'shutting down');
      void close().then(resolve);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

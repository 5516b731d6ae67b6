import type { Logger } from '../log.js';
import { createExecutor, type ExecConfig } from './index.js';
import type { ScriptExecutor } from './types.js';

/** Picks the executor of a kind; close() stops those it made (the local warm pool's sandboxes) at shutdown. */
export type ExecutorChooser = ((cfg: ExecConfig) => Promise<ScriptExecutor>) & { close(): Promise<void> };

/**
 * The executor of each kind, made once per process at its first use: a worker's reproductions and fix checks
 * share them. `given` (tests) is used for every kind and never closed here.
 */
export function executorChooser(options: { log: Logger; given?: ScriptExecutor }): ExecutorChooser {
  const executors = new Map<string, Promise<ScriptExecutor>>();
  const choose = (cfg: ExecConfig): Promise<ScriptExecutor> => {
    if (options.given) return Promise.resolve(options.given);
    let made = executors.get(cfg.kind);
    if (!made) {
      made = createExecutor(cfg, { log: options.log });
      executors.set(cfg.kind, made);
    }
    return made;
  };
  const close = async (): Promise<void> => {
    const made = await Promise.allSettled([...executors.values()]);
    executors.clear();
    await Promise.all(made.map((m) => (m.status === 'fulfilled' ? m.value.close?.().catch(() => undefined) : undefined)));
  };
  return Object.assign(choose, { close });
}

import type { AheadBook } from './import-ahead.js';
import type { ServerHandle } from './fork-run.js';
import type { Prepared } from '../sandbox/run.js';
import type { Isolation } from '../types.js';
import type { ReadyFrame } from './fork-server-frames.js';

/** One fork server of the warm pool (pool.ts), as the pool keeps it. */
export interface ServerEntry extends ServerHandle {
  key: string;
  workdir: string;
  prepared: Prepared;
  isolation: Isolation;
  /** The ready frame; null when the server died first. */
  ready: Promise<ReadyFrame | null>;
  readyInfo: ReadyFrame | null;
  /** What it imported ahead of runs (import-ahead.ts): which runs it may serve. */
  ahead: AheadBook;
  state: 'idle' | 'busy' | 'gone';
  runs: number;
  idle: NodeJS.Timeout | null;
  discard(): Promise<void>;
}

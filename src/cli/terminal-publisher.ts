import type { Published, ResultPublisher, RunEnd } from '../pipeline/ports.js';
import type { ProgressFn } from '../pipeline/types.js';
import { stagePrinter, type ProgressOptions } from './progress.js';

/** How a run that ended without a result reads on the terminal. */
export function describeEnd(end: RunEnd): string {
  switch (end.kind) {
    case 'cancelled':
      return `cancelled by ${end.by}; nothing written`;
    case 'failed':
      return `failed: ${end.reason}`;
    case 'time_budget':
      return `stopped: the run passed its time budget of ${end.minutes} min`;
    case 'bad_ref':
      return `the ref '${end.ref}' does not exist`;
  }
}

/**
 * The run on a terminal (stderr): one line per stage with its time (src/cli/progress.ts), and one line when
 * the run ends without a result. `quiet`: nothing printed, the stages go to `sink` (a bench's heartbeat).
 */
export function terminalPublisher(
  write: (line: string) => void,
  options: ProgressOptions & {
    /** Before each stage line (a bench case's id). */
    prefix?: string;
    /** Before the end line (`repgen reproduce`). */
    name?: string;
    quiet?: boolean;
    sink?: ProgressFn;
  } = {},
): ResultPublisher {
  const prefix = options.prefix ?? '';
  const printer = options.quiet
    ? { progress: options.sink ?? (() => undefined), flush: () => undefined }
    : stagePrinter((line) => write(`${prefix}${line}`), options);
  return {
    progress: async (stage, message) => {
      await printer.progress(stage, message);
    },
    publish: async (): Promise<Published> => {
      printer.flush();
      return { locations: [] };
    },
    end: async (end) => {
      printer.flush();
      if (!options.quiet) write(`${options.name ? `${options.name}: ` : prefix}${describeEnd(end)}`);
    },
  };
}

import { readAppEnv, type AppEnv } from '../config/app-env.js';
import { createLineLogger, type Logger } from '../log.js';
import type { CliIo, Command } from './io.js';
import { parseCliArgs } from './parse-args.js';
import { runUntilSignal } from './run-until-signal.js';

/**
 * A long-running App process (`repgen serve`, `repgen worker`): no options, the App's environment read
 * before anything starts, logs on stderr, and a graceful close on SIGTERM/SIGINT. `start` returns that close.
 */
export function appCommand(
  summary: string,
  help: string,
  start: (env: AppEnv, io: CliIo, log: Logger) => Promise<() => Promise<void>>,
): Command {
  return {
    summary,
    help,
    run: async (args, io) => {
      if (!parseCliArgs(args, {})) {
        io.stdout(help);
        return 0;
      }
      const env = readAppEnv(io.env);
      const log = createLineLogger((l) => io.stderr(l));
      const close = await start(env, io, log);
      await runUntilSignal(close, log);
      return 0;
    },
  };
}

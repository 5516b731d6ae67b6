import { SetupError, UsageError } from './errors.js';
import { processIo, type CliIo, type Command } from './cli/io.js';
import { SUMMARIES, topHelp, version } from './cli/top-help.mjs';

/**
 * Subcommands, each loaded only when asked for so that `repgen run` never pays for Probot or ONNX, and
 * `repgen --help` loads none (the summaries live in cli/top-help.mjs, which bin/repgen.js reads without tsx).
 * Written out one by one (not a computed path) so that bundlers and vite's test runner can follow them.
 */
export const COMMANDS: Record<keyof typeof SUMMARIES, () => Promise<{ command: Command }>> = {
  run: () => import('./commands/run.js'),
  context: () => import('./commands/context.js'),
  reproduce: () => import('./commands/reproduce.js'),
  bench: () => import('./commands/bench.js'),
  serve: () => import('./commands/serve.js'),
  worker: () => import('./commands/worker.js'),
  k8s: () => import('./commands/k8s.js'),
};

async function loadCommand(name: string): Promise<Command | null> {
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name as keyof typeof COMMANDS] : undefined;
  return load ? (await load()).command : null;
}

/** Runs the CLI; resolves to the exit code (0 ok, 1 the job's own negative outcome, 2 usage or setup error). */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    io.stdout(`repgen ${version()}\n`);
    return 0;
  }
  if (name === 'help' && rest[0] && !rest[0].startsWith('-')) {
    const target = await loadCommand(rest[0]);
    if (!target) {
      io.stderr(`repgen: unknown command '${rest[0]}'. Run 'repgen --help' for the list.\n`);
      return 2;
    }
    io.stdout(`${target.help.trimEnd()}\n`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(topHelp());
    return 0;
  }
  const cmd = await loadCommand(name);
  if (!cmd) {
    io.stderr(`repgen: unknown command '${name}'. Run 'repgen --help' for the list.\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(`${cmd.help.trimEnd()}\n`);
    return 0;
  }
  try {
    return await cmd.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`repgen ${name}: ${err.message}\n`);
      return 2;
    }
    if (err instanceof SetupError) {
      io.stderr(`repgen ${name}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

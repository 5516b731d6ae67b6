import { SetupError, UsageError } from './errors.js';
import { processIo, type CliIo, type Command } from './cli/io.js';

/**
 * Subcommands, each loaded only when asked for so that `repgen run` never pays for Probot or ONNX.
 * Written out one by one (not a computed path) so that bundlers and vite's test runner can follow them.
 */
const COMMANDS: Record<string, () => Promise<{ command: Command }>> = {
  run: () => import('./commands/run.js'),
  context: () => import('./commands/context.js'),
  reproduce: () => import('./commands/reproduce.js'),
  bench: () => import('./commands/bench.js'),
  serve: () => import('./commands/serve.js'),
  worker: () => import('./commands/worker.js'),
  k8s: () => import('./commands/k8s.js'),
};

async function loadCommand(name: string): Promise<Command | null> {
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  return load ? (await load()).command : null;
}

async function topHelp(): Promise<string> {
  const lines = ['usage: repgen <command> [options]', '', 'Reproduces deep-learning bugs from issue reports.', '', 'commands:'];
  for (const name of Object.keys(COMMANDS)) {
    const cmd = await loadCommand(name);
    if (cmd) lines.push(`  ${name.padEnd(10)} ${cmd.summary}`);
  }
  lines.push('', "Run 'repgen <command> --help' for a command's options.");
  return `${lines.join('\n')}\n`;
}

/** Runs the CLI; resolves to the exit code (0 ok, 1 the job's own negative outcome, 2 usage or setup error). */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(await topHelp());
    return name ? 0 : 2;
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

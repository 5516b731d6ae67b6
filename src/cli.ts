import { SetupError, UsageError } from './errors.js';
import { processIo, type CliIo, type Command } from './cli/io.js';

/** Subcommands, each loaded only when asked for so that `repgen run` never pays for Probot or ONNX. */
const COMMANDS = ['run', 'context', 'reproduce', 'bench', 'serve', 'worker', 'k8s'] as const;

async function loadCommand(name: string): Promise<Command | null> {
  if (!(COMMANDS as readonly string[]).includes(name)) return null;
  try {
    return ((await import(`./commands/${name}.js`)) as { command: Command }).command;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && String(err).includes(`commands/${name}`)) return null;
    throw err;
  }
}

async function topHelp(): Promise<string> {
  const lines = ['usage: repgen <command> [options]', '', 'Reproduces deep-learning bugs from issue reports.', '', 'commands:'];
  for (const name of COMMANDS) {
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

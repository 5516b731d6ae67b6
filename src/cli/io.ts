/** What a command may touch of its process: injected so that tests run commands in-process. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
  };
}

/** A command module: `repgen <name> …` lazily imports `src/commands/<name>.ts`. */
export interface Command {
  /** One line for `repgen --help`. */
  summary: string;
  /** Full text for `repgen <name> --help`. */
  help: string;
  /** Runs the command; resolves to the process exit code. Throws UsageError for bad input. */
  run: (args: string[], io: CliIo) => Promise<number>;
}

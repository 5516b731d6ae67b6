import { spawn } from 'node:child_process';
import { SetupError } from '../errors.js';

/**
 * `--python /bin/true` "ran" every script with exit 0 and no output, and RepGen took that for a run. The interpreter
 * a user or operator names is asked, before any run, to say it is a Python 3: a program that is not one prints no
 * marker (or fails, or hangs) and is refused with a SetupError naming the setting.
 *
 * The probe runs isolated (`-I`: no PYTHON* variables, no user site, no current folder on sys.path) from `/` with
 * only PATH and LANG, so nothing of a checkout or of RepGen's environment (tokens) reaches it.
 */

const MARKER = 'repgen-python-check';
// %-formatting and sys.stdout.write: a Python 2 answers too (and is refused by its version), instead of failing to parse.
const PROBE = `import sys; sys.stdout.write("${MARKER} %d.%d.%d\\n" % tuple(sys.version_info[:3]))`;
const MAX_OUTPUT = 64 * 1024;

export interface CheckPythonOptions {
  /** The option or setting that named it, for the message (`--python`, `REPGEN_PYTHON`). */
  setting: string;
  /** How long the probe may take; a program that hangs is no interpreter we can use. @defaultValue 30000 */
  timeoutMs?: number;
  /** PATH to find a bare name on. @defaultValue process.env.PATH */
  path?: string;
}

/** Version `[major, minor, micro]` of `python`, or a SetupError saying why it is not a usable Python 3. */
export async function checkPython(python: string, o: CheckPythonOptions): Promise<[number, number, number]> {
  const named = `${o.setting} '${python}'`;
  const answer = await probe(python, o);
  if ('error' in answer) throw new SetupError(`${named} ${answer.error}`);
  const m = new RegExp(`^${MARKER} (\\d+)\\.(\\d+)\\.(\\d+)$`, 'm').exec(answer.stdout);
  if (!m) {
    const said = answer.stdout.trim().split('\n')[0]?.slice(0, 80);
    const how = answer.code !== 0 ? `exit ${answer.code ?? answer.signal}` : said ? `it printed '${said}'` : 'it printed nothing';
    throw new SetupError(`${named} is not a Python interpreter: asked for its version, ${how}`);
  }
  const version: [number, number, number] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (version[0] < 3) throw new SetupError(`${named} is Python ${version.join('.')}: RepGen needs Python 3`);
  return version;
}

type ProbeAnswer = { stdout: string; code: number | null; signal: NodeJS.Signals | null } | { error: string };

function probe(python: string, o: CheckPythonOptions): Promise<ProbeAnswer> {
  const timeoutMs = o.timeoutMs ?? 30_000;
  return new Promise((resolve) => {
    let stdout = '';
    let timedOut = false;
    const child = spawn(python, ['-I', '-c', PROBE], {
      cwd: '/',
      env: { PATH: o.path ?? process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.toString('utf8');
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({
        error:
          err.code === 'ENOENT'
            ? 'does not exist (not found on PATH)'
            : err.code === 'EACCES'
              ? 'is not executable'
              : `cannot be started: ${err.code ?? err.message}`,
      });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve({ error: `is not a Python interpreter: it did not answer a version check within ${timeoutMs / 1000} s` });
      else resolve({ stdout, code, signal });
    });
  });
}

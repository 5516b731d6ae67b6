import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { SetupError, UsageError } from '../errors.js';

/**
 * Checks of what a user names on the command line, made before any pipeline work: each bad input gets one
 * line and exit 2 (README: usage or setup error), never a failure after minutes of work or a hang.
 */

/** Kernel and device trees: writing results there is never meant (a recursive mkdir under /proc never ends). */
const SYSTEM_TREES = ['/proc', '/sys', '/dev'];

/** Longest `--timeout` accepted, in seconds (a day); Node's timers overflow past about 24.8 days. */
export const MAX_TIMEOUT_SECONDS = 86_400;

function nearestExisting(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return p;
}

/**
 * Makes sure `dir` can take the results: it is (or can become) a writable folder outside /proc, /sys and /dev.
 * Creates it. Throws a UsageError naming the flag otherwise.
 */
export function prepareOutDir(dir: string, flag = '--out'): string {
  const abs = resolve(dir);
  const existing = nearestExisting(abs);
  let real: string;
  try {
    real = realpathSync(existing);
  } catch {
    real = existing;
  }
  const target = existing === abs ? real : join(real, abs.slice(existing.length));
  if (SYSTEM_TREES.some((t) => target === t || target.startsWith(`${t}/`)))
    throw new UsageError(`${flag} '${dir}' is inside ${target.split('/').slice(0, 2).join('/')}: choose a normal folder for the results`);
  if (existing === abs && !statSync(abs).isDirectory()) throw new UsageError(`${flag} '${dir}' is a file, not a folder`);
  if (existing !== abs && !statSync(existing).isDirectory())
    throw new UsageError(`${flag} '${dir}': '${existing}' is a file, not a folder`);
  try {
    accessSync(existing, constants.W_OK);
    mkdirSync(abs, { recursive: true });
    const probe = join(abs, `.repgen-write-check-${process.pid}`);
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      `${flag} '${dir}' cannot be written: ` +
        `${code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'read-only file system' : (code ?? String(err))}`,
    );
  }
  return abs;
}

/** `--timeout SEC`: a finite number of seconds in (0, 86400]; undefined stays undefined. */
export function timeoutSeconds(value: unknown, flag = '--timeout'): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > MAX_TIMEOUT_SECONDS) {
    throw new UsageError(
      `${flag} must be a number of seconds above 0 and at most ${MAX_TIMEOUT_SECONDS}, got '${String(value).slice(0, 40)}'`,
    );
  }
  return n;
}

/** `--python PATH` given as a path must be an executable file; a bare name is looked up on PATH by the executor. */
export function checkInterpreter(python: string | undefined, flag = '--python'): void {
  if (python === undefined || !python.includes('/')) return;
  let st;
  try {
    st = statSync(python);
  } catch {
    throw new SetupError(`${flag} '${python}' does not exist`);
  }
  if (!st.isFile()) throw new SetupError(`${flag} '${python}' is not a file`);
  let head: Buffer;
  try {
    accessSync(python, constants.X_OK);
    const fd = openSync(python, 'r');
    try {
      const buf = Buffer.alloc(4);
      head = buf.subarray(0, readSync(fd, buf, 0, 4, 0));
    } finally {
      closeSync(fd);
    }
  } catch {
    throw new SetupError(`${flag} '${python}' is not executable: name a Python interpreter`);
  }
  // Root may execute any file with an x bit; a program starts with an ELF header or a #! line.
  if (!(head.toString('latin1') === '\x7fELF' || head.toString('latin1').startsWith('#!'))) {
    throw new SetupError(`${flag} '${python}' is not executable: name a Python interpreter`);
  }
}

/** Decodes a user-named file as strict UTF-8 text: NUL bytes or invalid sequences are a one-line UsageError. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  if (bytes.includes(0)) throw new UsageError(`${what} is a binary file, not text`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${what} is not valid UTF-8 text`);
  }
}

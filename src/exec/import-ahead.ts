import { leadingImports, runOwnModules } from './leading-imports.js';
import type { Prelude } from './local-fork-run.js';
import type { RunRequest } from './types.js';
import type { PreloadFrame } from './fork-server-frames.js';
import { SERVER_IMPORTS } from './warm-pool.js';

/**
 * What a fork server imported ahead of its runs, beyond SERVER_IMPORTS (warm-pool.ts, `_preload`). A server serves
 * a run only when everything it imported ahead is among the run's own leading imports: the run would have run that
 * code first anyway, so it starts where a cold run stands after its opening imports, and a run that imports less
 * never meets another run's modules.
 */
export interface AheadBook {
  /** Modules imported anew (or that failed there, half-imported): a run it serves imports them all. */
  imported: string[];
  /** Modules imported anew and whole, for the run's notes. */
  loaded: string[];
  /** Every module it was asked for, whatever came of it: not asked again. */
  asked: Set<string>;
  /** What those imports printed: a cold run prints it, so every run it serves gets it first. */
  prelude: Prelude;
}

export function emptyAheadBook(): AheadBook {
  return { imported: [], loaded: [], asked: new Set(), prelude: { stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) } };
}

/** What a run's leading imports ask of the server that serves it (importsAhead). */
export interface RunImports {
  /** Its leading imports but SERVER_IMPORTS: what its server may have imported ahead. */
  leading: string[];
  /** What its server may import for it now: the leading imports up to the first known not to import cleanly. */
  ahead: string[];
}

/**
 * Frameworks that start threads of their own when imported (TensorFlow's and XLA's thread pools, JAX's runtime): a
 * fork after importing them can deadlock, and JAX warns that it will. A server never imports them ahead; a run that
 * imports them is served up to its first one, which it imports itself, cold (docs/sandbox.md).
 */
export const FORK_UNSAFE: readonly string[] = ['tensorflow', 'keras', 'tf_keras', 'jax', 'jaxlib', 'flax', 'tensorflow_probability'];

/**
 * A run's imports (leading-imports.ts); `bad`: modules this pool's servers must not import ahead. A string when no
 * server may serve the run: its own files shadow a module every server imports when it starts.
 */
export function importsAhead(req: RunRequest, bad: ReadonlySet<string>): RunImports | string {
  const own = runOwnModules(
    req.files.map((f) => f.path),
    req.entry,
  );
  const shadowed = SERVER_IMPORTS.find((m) => own.has(m.split('.')[0] ?? m));
  if (shadowed) return `the run's own files shadow ${shadowed.split('.')[0]}, which the warm interpreter imports when it starts`;
  const all = leadingImports(req.files.find((f) => f.path === req.entry)?.content ?? '', own);
  const cut = all.findIndex((m) => bad.has(m) || FORK_UNSAFE.includes(m.split('.')[0] ?? m));
  const beyond = (names: string[]): string[] => names.filter((m) => !SERVER_IMPORTS.includes(m));
  return { leading: beyond(all), ahead: beyond(cut < 0 ? all : all.slice(0, cut)) };
}

/** Whether a server whose book this is may serve a run with these leading imports. */
export function servesRun(book: AheadBook, leading: readonly string[]): boolean {
  return book.imported.every((m) => leading.includes(m));
}

/**
 * Enters what a `P` frame says into the server's book and `bad`. A module that failed stays in the book (its
 * partial import is in the server; the run's own import fails the same way, as cold). Returns why the server must
 * not fork a run now (an import left a thread running: a fork copies locks held by threads the child lacks), or null.
 */
export function recordImportsAhead(book: AheadBook, done: PreloadFrame, asked: string[], bad: Set<string>): string | null {
  book.imported.push(...done.loaded);
  book.loaded.push(...done.loaded);
  for (const m of [...done.loaded, ...done.skipped]) book.asked.add(m);
  book.prelude = {
    stdout: Buffer.concat([book.prelude.stdout, Buffer.from(done.stdout, 'base64')]),
    stderr: Buffer.concat([book.prelude.stderr, Buffer.from(done.stderr, 'base64')]),
  };
  if (done.threads > 1) {
    const culprit = done.loaded[done.loaded.length - 1] ?? asked[0] ?? '?';
    bad.add(culprit);
    return `importing ${culprit} ahead left ${done.threads} threads in the warm interpreter: forking it could deadlock`;
  }
  if (done.failed) {
    bad.add(done.failed.module);
    book.asked.add(done.failed.module);
    book.imported.push(done.failed.module);
  }
  return null;
}

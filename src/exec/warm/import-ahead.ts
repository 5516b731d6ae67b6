import { leadingImports, runOwnModules } from './leading-imports.js';
import type { Prelude } from './fork-run.js';
import type { RunRequest } from '../types.js';
import type { PreloadFrame, ReadyFrame } from './fork-server-frames.js';
import { SERVER_IMPORTS } from './fork-server.js';

/**
 * What a fork server imported ahead of its runs, beyond SERVER_IMPORTS (fork-server.ts, `_preload`). A server serves
 * a run only when everything it imported ahead is among the run's own leading imports: the run would have run that
 * code first anyway, so it starts where a cold run stands after its opening imports, and a run that imports less
 * never meets another run's modules.
 */
export interface AheadBook {
  /** Modules imported anew: a run it serves imports them all. */
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
 * Enters what a `P` frame says into the server's book and `bad`. Returns why the server must not fork a run now, or
 * null: an import left a thread running (a fork copies locks held by threads the child lacks), or one failed. A
 * failed import leaves the server half-imported (a package's submodules that loaded stay in sys.modules, and what
 * they registered): a run forked from it would import the package again over that state and could fail otherwise
 * than it does cold, so the server is retired, and the module is never imported ahead again.
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
    return `importing ${done.failed.module} ahead failed (${done.failed.error}): the warm interpreter was retired`;
  }
  return null;
}

/**
 * Why a server that said it is ready must not fork a run, or null: an import left a thread running (a fork could
 * deadlock), or one of its own imports failed (it is half-imported; a run that imports that module would meet that
 * state instead of the true error).
 */
export function unfitServer(ready: ReadyFrame): string | null {
  if (ready.failed.length > 0) return `the warm interpreter could not import ${ready.failed[0]}`;
  if (ready.threads > 1) return `the warm interpreter had ${ready.threads} threads after its imports: forking it could deadlock`;
  return null;
}

/**
 * Base class of every error RepGen raises on purpose. Modules declare their own small subclasses
 * (one `errors.ts` per module) so that one place — the agent loop, the CLI, the BullMQ processor —
 * can decide what an error means by its class, never by parsing its message.
 */
export class RepgenError extends Error {
  override name = 'RepgenError';
}

/** Bad command-line input: the CLI prints the message on one line and exits 2. */
export class UsageError extends RepgenError {
  override name = 'UsageError';
}

/** A tool or setting RepGen needs is missing on this host (interpreter, sandbox, model). Exit 2 in the CLI. */
export class SetupError extends RepgenError {
  override name = 'SetupError';
}

/** The run was cancelled through its AbortSignal. */
export class CancelledError extends RepgenError {
  override name = 'CancelledError';
}

/** Where the run's issue lives says it is gone (a deleted issue or progress comment): stop, nobody is left to tell. */
export class SourceGoneError extends RepgenError {
  override name = 'SourceGoneError';
}

/** The ref a run was asked to use does not exist: the asker's mistake, retrying will not help. */
export class BadRefError extends RepgenError {
  override name = 'BadRefError';
}

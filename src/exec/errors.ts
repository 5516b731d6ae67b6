import { RepgenError, SetupError } from '../errors.js';

/** The request itself is malformed (schema violation, entry not among the files). Nothing was run. */
export class InvalidRunRequestError extends RepgenError {
  override name = 'InvalidRunRequestError';
}

/**
 * A run needs the project's built environment and this executor cannot give it one (Kubernetes without the env
 * cache volume, or an image that cannot run the worker's venvs). The message names the setting that fixes it.
 */
export class ProjectEnvUnavailableError extends InvalidRunRequestError {
  override name = 'ProjectEnvUnavailableError';
}

/** The interpreter a run needs does not exist or is not executable. The CLI exits 2 with this message. */
export class InterpreterNotFoundError extends SetupError {
  override name = 'InterpreterNotFoundError';
}

/** An isolation mode was asked for explicitly (REPGEN_SANDBOX=bwrap|unshare) and does not work on this host. */
export class SandboxUnavailableError extends SetupError {
  override name = 'SandboxUnavailableError';
}

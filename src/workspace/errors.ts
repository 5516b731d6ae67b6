import { RepgenError } from '../errors.js';

/** The project's checkout could not be made (no such repository, git failed, the cache is unwritable). */
export class WorkspaceError extends RepgenError {
  override name = 'WorkspaceError';
}

/** A ref the user asked for does not exist in the repository. */
export class RefNotFoundError extends WorkspaceError {
  override name = 'RefNotFoundError';
}

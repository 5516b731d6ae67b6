import { BadRefError, RepgenError, SourceGoneError } from '../errors.js';

/** The issue (or its progress comment) is gone: GitHub answers 404. The run stops; there is no one to tell. */
export class IssueGoneError extends SourceGoneError {
  override name = 'IssueGoneError';
}

/** The requested ref does not exist on the remote: the user's `--ref` was wrong, retrying will not help. */
export class RefNotFoundError extends BadRefError {
  override name = 'RefNotFoundError';
}

/** git could not fetch the repository (network, auth, a deleted repository). Retried with backoff. */
export class CloneError extends RepgenError {
  override name = 'CloneError';
}

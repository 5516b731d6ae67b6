import { UsageError } from '../errors.js';

/** The folder given as a repository cannot be indexed (missing, not a folder, empty, no Python). Exit 2 in the CLI. */
export class ContextInputError extends UsageError {
  override name = 'ContextInputError';
}

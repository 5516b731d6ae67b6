import { decodeUtf8 } from '../cli/validate-input.js';
import { UsageError } from '../errors.js';
import { ReadBoundedError, readBounded } from '../host/read-bounded.js';

/** Largest issue file `repgen reproduce` reads; bigger is refused as a usage error. */
export const MAX_ISSUE_FILE_BYTES = 50 * 1024 * 1024;

/**
 * Reads the issue file; every way it can be wrong (missing, a folder, a symbolic link, a device or FIFO, too big, binary,
 * not UTF-8) is a one-line UsageError. A link is refused: what it points to may be a file only RepGen's uid can read.
 */
export async function readIssueFile(path: string, shown: string = path): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readBounded(path, { maxBytes: MAX_ISSUE_FILE_BYTES, what: `--issue '${shown}'`, noFollow: true });
  } catch (err) {
    throw err instanceof ReadBoundedError ? new UsageError(err.message) : err;
  }
  return decodeUtf8(bytes, `--issue '${shown}'`);
}

/** Values of secret-looking variables of this process: never written into comment.md or evidence.json. */
export function hostSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([k, v]) => v && v.length >= 8 && /TOKEN|SECRET|KEY|PASSWORD|PRIVATE|CREDENTIAL/i.test(k))
    .map(([, v]) => v as string);
}

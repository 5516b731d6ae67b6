import { readFile, stat } from 'node:fs/promises';
import { decodeUtf8 } from '../cli/validate-input.js';
import { UsageError } from '../errors.js';

/** Largest issue file `repgen reproduce` reads; bigger is refused as a usage error. */
export const MAX_ISSUE_FILE_BYTES = 50 * 1024 * 1024;

/** Reads the issue file; every way it can be wrong (missing, a folder, too big, binary, not UTF-8) is a one-line UsageError. */
export async function readIssueFile(path: string, shown: string = path): Promise<string> {
  try {
    const st = await stat(path);
    if (st.isDirectory()) throw new UsageError(`--issue '${shown}' is a directory, not a file`);
    if (st.size > MAX_ISSUE_FILE_BYTES)
      throw new UsageError(`--issue '${shown}' is ${st.size} bytes; the limit is ${MAX_ISSUE_FILE_BYTES}`);
    return decodeUtf8(await readFile(path), `--issue '${shown}'`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(
      code === 'ENOENT' ? `--issue '${shown}' does not exist` : `cannot read --issue '${shown}': ${code ?? String(err)}`,
    );
  }
}

/** Values of secret-looking variables of this process: never written into comment.md or evidence.json. */
export function hostSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env)
    .filter(([k, v]) => v && v.length >= 8 && /TOKEN|SECRET|KEY|PASSWORD|PRIVATE|CREDENTIAL/i.test(k))
    .map(([, v]) => v as string);
}

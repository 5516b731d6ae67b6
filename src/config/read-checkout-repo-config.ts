import { lstatSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { readBoundedSync } from '../host/read-bounded.js';
import { parseRepoConfig, type RepoConfigResult } from './repo-config.js';

/** Where a repository keeps its RepGen settings (the App and the Action read the same path). */
export const CHECKOUT_CONFIG_PATH = '.github/repgen.yml';

/**
 * `.github/repgen.yml` of a checkout at the ref, as `repgen reproduce --repo` reads it: the same parser as the App's
 * and the Action's (src/github/load-repo-config.ts). Absent → the defaults. The checkout is the repository's, so a
 * link that leads out of it (to a file of this machine) is refused, never read.
 */
export function readCheckoutRepoConfig(checkoutDir: string): RepoConfigResult {
  const path = join(checkoutDir, CHECKOUT_CONFIG_PATH);
  const st = (() => {
    try {
      return lstatSync(path);
    } catch {
      return null;
    }
  })();
  if (!st) return parseRepoConfig(null);
  const bad = (message: string): RepoConfigResult => ({ ok: false, problems: [{ key: '(file)', message }] });
  if (!st.isFile()) return bad(`${CHECKOUT_CONFIG_PATH} is not a regular file`);
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return bad(`${CHECKOUT_CONFIG_PATH} cannot be read`);
  }
  // `.github` itself may be a link out of the checkout.
  if (!real.startsWith(realpathSync(checkoutDir) + sep)) return bad(`${CHECKOUT_CONFIG_PATH} lies outside the checkout`);
  try {
    return parseRepoConfig(readBoundedSync(real, { maxBytes: 64 * 1024, what: CHECKOUT_CONFIG_PATH }).toString('utf8'));
  } catch (err) {
    return bad((err as Error).message.slice(0, 200));
  }
}

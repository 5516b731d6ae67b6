import { join } from 'node:path';
import { SetupError } from '../errors.js';
import { readExecConfig } from '../exec/index.js';
import { SandboxUnavailableError } from '../exec/errors.js';
import { probeSandbox } from '../exec/sandbox/sandbox.js';
import { ReadBoundedError, readBounded } from '../host/read-bounded.js';

/** The host cannot run untrusted scripts safely, or the checkout would hand them a credential. */
export class ActionSetupError extends SetupError {
  override name = 'ActionSetupError';
}

/** The runner step that lifts Ubuntu 24.04's AppArmor restriction on unprivileged user namespaces. */
export const APPARMOR_SYSCTL = 'sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0';

export interface SandboxCheckDeps {
  /** Reads a /proc/sys file; null when absent. @defaultValue the real file */
  readSysctl?: (path: string) => Promise<string | null>;
  /** @defaultValue probeSandbox, run exactly as a script run would start it */
  probe?: typeof probeSandbox;
}

/**
 * Before anything runs: the local sandbox must start here (bubblewrap in fresh user and network namespaces),
 * unless the workflow chose `sandbox: none` or a Kubernetes executor. When it cannot, the error says why and
 * what the workflow must do — on GitHub's Ubuntu 24.04 runners that is nearly always AppArmor.
 */
export async function checkSandbox(env: NodeJS.ProcessEnv, deps: SandboxCheckDeps = {}): Promise<string> {
  const cfg = readExecConfig(env);
  if (cfg.kind !== 'local') return `${cfg.kind} executor`;
  if (cfg.sandbox === 'none') return 'no sandbox (sandbox: none): scripts run unisolated on the runner';
  try {
    const plan = await (deps.probe ?? probeSandbox)(cfg.sandbox, { workRoot: cfg.workRoot, sandboxUid: cfg.sandboxUid });
    return `bubblewrap (${plan.binary})${plan.notes.length ? `; ${plan.notes.join('; ')}` : ''}`;
  } catch (err) {
    if (!(err instanceof SandboxUnavailableError)) throw err;
    throw new ActionSetupError(`${err.message}${await sandboxHint(deps.readSysctl ?? readSysctl)}`);
  }
}

async function sandboxHint(read: (path: string) => Promise<string | null>): Promise<string> {
  const apparmor = (await read('/proc/sys/kernel/apparmor_restrict_unprivileged_userns'))?.trim();
  if (apparmor === '1') {
    return (
      `. AppArmor restricts unprivileged user namespaces on this runner ` +
      `(kernel.apparmor_restrict_unprivileged_userns=1, the default on Ubuntu 24.04); add a step before ` +
      `RepGen: \`${APPARMOR_SYSCTL}\``
    );
  }
  const userns = (await read('/proc/sys/user/max_user_namespaces'))?.trim();
  if (userns === '0')
    return '. User namespaces are off on this runner (user.max_user_namespaces=0): `sudo sysctl -w user.max_user_namespaces=15000`';
  return '. On GitHub-hosted runners install it with `sudo apt-get install -y bubblewrap` (docs/github-action.md)';
}

async function readSysctl(path: string): Promise<string | null> {
  return (await readBounded(path, { maxBytes: 4096 }).catch(() => null))?.toString('utf8') ?? null;
}

/**
 * Scripts see the checkout (read-only). actions/checkout leaves the job's token in `.git/config` unless told
 * `persist-credentials: false`; a script could read it there, so RepGen refuses such a checkout.
 */
export async function checkCheckoutHoldsNoToken(workspace: string): Promise<void> {
  let config = '';
  try {
    config = (await readBounded(join(workspace, '.git', 'config'), { maxBytes: 1_000_000, what: "the checkout's .git/config" })).toString(
      'utf8',
    );
  } catch (err) {
    // No readable config: no token in it. One that is there but cannot be read through (a FIFO, a device, huge) is refused.
    if (err instanceof ReadBoundedError && (err.reason === 'not_a_file' || err.reason === 'too_big'))
      throw new ActionSetupError(`cannot check for the workflow token: ${err.message}`);
  }
  if (/^\s*extraheader\s*=.*\bauthorization\s*:/im.test(config)) {
    throw new ActionSetupError(
      'the checkout keeps the workflow token in .git/config, where the scripts RepGen runs could read it; ' +
        'check out with `persist-credentials: false` (actions/checkout)',
    );
  }
}

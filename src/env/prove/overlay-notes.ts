// The cold overlay's checks, as the substitutions the next build says (src/env/uv-builder.ts): the base packages a lock
// installed on top of the base must not take from it, by the lock's metadata and by import (overlay-check.ts).
import { join } from 'node:path';
import type { PythonInfo } from '../build/read-base-interpreter.js';
import { normaliseName, parseLock } from '../lock/uv-lock.js';
import type { UvContext } from '../sandboxed/uv-run.js';
import type { EnvSpec, Substitution } from '../types.js';
import { baseOutsideLock, overlayImportFailures, ownMetadata, shadowedBase } from './overlay-check.js';

/**
 * A cold overlay's metadata check (src/env/prove/overlay-check.ts): the base packages whose version is outside what
 * the lock's own packages declare they need, which the next build installs at the lock's version. Null when none.
 */
export async function baseOutsideLockNotes(
  venv: string,
  py: PythonInfo,
  fullLock: string,
  provided: string[],
): Promise<{ names: string[]; notes: Substitution[] } | null> {
  const metadata = await ownMetadata(join(venv, 'lib', `python${py.minor}`, 'site-packages'));
  const locked = parseLock(fullLock);
  const outside = baseOutsideLock(metadata, provided, py.installed, py.minor).filter((o) => locked[o.name] !== undefined);
  if (!outside.length) return null;
  const notes = outside.map((o): Substitution => ({
    name: o.name,
    wanted: `${o.base} (the base interpreter’s)`,
    got: locked[o.name] as string,
    why: `${o.by} requires ${o.name}${o.required}, which the base's ${o.base} is not, so the env has its own`,
  }));
  return { names: outside.map((o) => o.name), notes };
}

/**
 * A cold overlay's import check (src/env/prove/overlay-check.ts): the base packages the lock's own modules fail to import
 * with, which the next build installs at the lock's version, each said as a substitution. Null when none.
 */
export async function baseTooOldNotes(
  ctx: UvContext,
  buildDir: string,
  venv: string,
  spec: EnvSpec,
  fullLock: string,
  installed: Record<string, string>,
  provided: string[],
): Promise<{ names: string[]; notes: Substitution[] } | null> {
  const direct = spec.requirements.map((r) => normaliseName(r.name)).filter((n) => installed[n] !== undefined);
  const failures = await overlayImportFailures(ctx, buildDir, join(venv, 'bin', 'python'), direct);
  const locked = parseLock(fullLock);
  const names = failures ? shadowedBase(failures, provided, locked) : [];
  if (!names.length || !failures) return null;
  const notes = names.map((name): Substitution => {
    const f = failures.find((x) => x.dists.map(normaliseName).includes(name));
    const baseVersion = Object.entries(f?.versions ?? {}).find(([d]) => normaliseName(d) === name)?.[1];
    return {
      name,
      wanted: baseVersion ? `${baseVersion} (the base interpreter’s)` : 'the base interpreter’s',
      got: locked[name] as string,
      why: `${f?.module ?? 'a package of the lock'} fails to import with it (${(f?.error ?? '').slice(0, 160)}), so the env has its own`,
    };
  });
  return { names, notes };
}

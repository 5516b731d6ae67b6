// A project that declares its deep-learning framework only as an extra named after it: diffusers and transformers
// install without torch (`pip install diffusers[torch]` brings it), yet their models are torch code and every report
// against them runs on one. The framework's own line of that extra (`torch>=1.4`, not the extra's other packages) is a
// requirement of the env when nothing else names a framework, so the version decision records which torch the runs use
// and why (the base's while its import proof passes, the era's floor beside it) instead of leaving it unsaid. Pure.
import type { DeclaredRequirement } from '../read/read-requirement-files.js';

/** The frameworks, by the distribution name an extra named after one carries. */
export const FRAMEWORK_DISTRIBUTIONS = ['torch', 'tensorflow', 'jax'] as const;

/**
 * The framework line of the project's one extra named after a framework (`extras_require["torch"]`'s `torch>=1.4`), or
 * null when there is none, when several frameworks have such an extra (which one the report's code runs on is then
 * for the report, its imports or repgen.yml to say), or when `named` (the frameworks something else already asks for)
 * is not empty.
 */
export function frameworkOfExtras(
  extras: Readonly<Record<string, readonly DeclaredRequirement[]>>,
  named: readonly string[],
): { extra: string; declared: DeclaredRequirement } | null {
  if (named.length) return null;
  const found = FRAMEWORK_DISTRIBUTIONS.flatMap((fw) => {
    const declared = extras[fw]?.find((d) => d.req.name === fw);
    return declared ? [{ extra: fw, declared }] : [];
  });
  return found.length === 1 ? (found[0] ?? null) : null;
}

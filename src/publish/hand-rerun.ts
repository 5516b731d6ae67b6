import type { ReproOutcome } from '../pipeline/types.js';

/**
 * How a maintainer runs the posted repro.py by hand, for every layout. With the project's checkout and no install,
 * both its root and its `src/` go on PYTHONPATH: a flat layout imports from the root, a `src/` layout from `src/`
 * (the root alone, the line once documented, fails there). A project with compiled extensions or pinned
 * dependencies runs in an environment where it is installed, as RepGen's env had it. Pure.
 */
export function handRerunLine(outcome: ReproOutcome): string {
  const project = outcome.environment['project'] !== undefined || outcome.env !== undefined;
  if (!project) return 'Run it by hand: `python repro.py`.';
  const pins = outcome.env?.lock ? ' with the packages of `requirements-repro.txt`' : '';
  return (
    "Run it by hand from a scratch folder, with `<checkout>` a checkout of the project at the issue's commit: " +
    '`PYTHONPATH=<checkout>/src:<checkout> python repro.py` (a `src/` layout and a flat one alike), or ' +
    `\`python repro.py\` in an environment where the project is installed (\`pip install -e <checkout>\`${pins}).`
  );
}

import { shortRef } from '../bisect/plan-bisect.js';
import type { ReproOutcome } from '../pipeline/types.js';
import { neutralizeMentions } from './neutralize.js';

/** `text` in a code span that cannot be closed early, on one line. */
function code(text: string): string {
  return `\`${text.replace(/`/g, "'").replace(/\s+/g, ' ')}\``;
}

/**
 * The bisection's part of the result comment: the first bad commit (its subject is the repository's text,
 * neutralised; the PR link is RepGen's own, read from that subject), whether its diff touches what the
 * reproduction imports, the runs it took against log2 of the range, and the commits skipped and why. Pure.
 */
export function bisectSection(outcome: ReproOutcome): string {
  const b = outcome.bisect;
  if (!b) return '';
  const range = `${code(shortRef(b.good.ref))}..${code(shortRef(b.bad.ref))}`;
  // A bisection that stopped at GOOD (no regression, GOOD unusable, GOOD off the first-parent line) never halved anything.
  const bisected = b.status === 'found' || b.status === 'ambiguous' || b.status === 'ceiling';
  const runs = `${b.steps.length} run${b.steps.length === 1 ? '' : 's'}`;
  const lines = [
    `**${bisected ? 'Bisected' : 'Not bisected'}** ${range} (${neutralizeMentions(b.good.why)}), ${runs} over ${b.commitsInRange} ` +
      `first-parent commits (log2: ${b.expectedSteps}):`,
  ];
  if (b.status === 'found' && b.firstBad) {
    const f = b.firstBad;
    const pr = f.pr !== null ? ` (#${f.pr})` : '';
    lines.push(`- first bad commit ${code(f.sha.slice(0, 12))} ${neutralizeMentions(f.subject)}${pr}`);
    if (f.inTraceback?.length)
      lines.push(
        `- it changes ${f.inTraceback.slice(0, 3).map(code).join(', ')}, where the failing run's traceback at it passes (innermost first)`,
      );
    lines.push(
      f.touchesImported.length
        ? `- it changes ${f.touchesImported.slice(0, 5).map(code).join(', ')}, inside what the reproduction imports`
        : `- none of the ${f.changedFiles.length} files it changes lies inside a package the reproduction imports: check it by hand`,
    );
  } else {
    lines.push(`- ${neutralizeMentions(b.reason)}`);
    for (const c of b.candidates.slice(0, 10)) lines.push(`  - ${code(c.sha.slice(0, 12))} ${neutralizeMentions(c.subject)}`);
  }
  // Each commit's own environment (issue 27): how many there were, so a reader knows the steps did not share one.
  const envs = new Set(b.steps.flatMap((s) => (s.env ? [s.env.replace(/, (reused|built)$/, '')] : [])));
  if (envs.size)
    lines.push(
      `- each step ran in its commit's own environment: ${envs.size} distinct lock${envs.size === 1 ? '' : 's'} (evidence.json names each step's)`,
    );
  const skipped = b.steps.filter((s) => s.verdict === 'skip');
  for (const s of skipped.slice(0, 5)) lines.push(`- skipped ${code(s.sha.slice(0, 12))}: ${neutralizeMentions(s.why)}`);
  if (skipped.length > 5) lines.push(`- … and ${skipped.length - 5} more skipped (evidence.json)`);
  return lines.join('\n');
}

import { neutralizeMentions } from '../publish/neutralize.js';

/**
 * Every short text the App posts on its own (not the result comment, which src/publish/ builds).
 * Pure; anything echoed from users is passed through `neutralise` so a reply never pings anyone.
 */

export const HELP_TEXT = [
  '**RepGen** reproduces the bug described in this issue: it writes a script that makes the bug happen, runs it in a sandbox and posts the evidence.',
  '',
  '| comment | what it does |',
  '|---|---|',
  '| `/repgen` | start a run (options: `--gpu`, `--ref SHA_OR_BRANCH`, `--llm PROVIDER_OR_MODEL`) |',
  '| `/repgen retry` | run again |',
  '| `/repgen cancel` | stop the run in progress |',
  '| `/repgen status` | say what the current run is doing |',
  '| `/repgen pr` | open a PR adding the reproduction as an `xfail(strict=True)` regression test |',
  '| `/repgen verify [#N]` | on a pull request: run the confirmed reproduction of the issue it fixes ' +
    '(or of `#N`) at the PR head; a check run says fixed / still failing / inconclusive |',
  '| `/repgen bisect [GOOD]` | reproduce, then find the first commit that broke it between GOOD (where it worked; ' +
    "default: a version the report says worked) and the issue's ref |",
  '| `/repgen help` | this text |',
  '',
  'Adding the trigger label (`needs-repro` unless `.github/repgen.yml` says otherwise) also starts a ' +
    'run. Only people with write access (or the roles the config lists) can trigger RepGen.',
].join('\n');

/** Stops @mentions and #references copied from users from pinging (the result comment's rule too). */
export function neutralise(text: string): string {
  return neutralizeMentions(text);
}

export function helpComment(reason?: string): string {
  return reason ? `RepGen did not understand that: ${neutralise(reason)}.\n\n${HELP_TEXT}` : HELP_TEXT;
}

export function refusalComment(login: string, roles: readonly string[]): string {
  return (
    // The name without the @: a refusal must not ping (notify) anyone.
    `Sorry, ${neutralise(login)} — in this repository only people with the ` +
    `${roles.map((r) => `\`${r}\``).join(', ')} role can start RepGen. A maintainer can start it with ` +
    `\`/repgen\` or by adding the trigger label. (RepGen answers this once per person and issue.)`
  );
}

export function alreadyRunningComment(commentUrl: string): string {
  return commentUrl
    ? `A RepGen run is already in progress on this issue: ${commentUrl}. Use \`/repgen cancel\` to stop it first.`
    : 'A RepGen run is already in progress on this issue. Use `/repgen cancel` to stop it first.';
}

export function badConfigComment(problems: readonly { key: string; message: string }[]): string {
  const lines = problems.slice(0, 20).map((p) => `- \`${p.key.replace(/`/g, '')}\`: ${neutralise(p.message)}`);
  return [
    'RepGen did not start: `.github/repgen.yml` has a problem, so nothing was run.',
    '',
    ...lines,
    '',
    'Fix the file (or delete it to use the defaults) and trigger RepGen again.',
  ].join('\n');
}

export function queuedComment(jobMarker: string, delayMs: number, requestedBy: string): string {
  const wait = delayMs > 0 ? ` It will start in about ${Math.ceil(delayMs / 60_000)} min (this repository's rate limit).` : '';
  return `${jobMarker}\n⏳ **RepGen** is queued to reproduce this issue (asked by ${requestedBy}).${wait}\n\nComment \`/repgen cancel\` to stop it.`;
}

export function progressMarker(jobId: string): string {
  return `<!-- repgen:progress job=${jobId} -->`;
}

export function enqueueFailedComment(jobMarker: string): string {
  return `${jobMarker}\n❌ RepGen could not queue this run (its queue is unavailable). Nothing ran; please trigger it again in a few minutes.`;
}

export function cancelledComment(jobMarker: string, by: string): string {
  return `${jobMarker}\n🛑 **RepGen** run cancelled by ${by}. Nothing more will run; \`/repgen\` starts a new run.`;
}

/** `attempts`: runs that really started; `crashed`: how many of them ended with their worker dying (stalled). */
export function finalFailureComment(jobMarker: string, reason: string, attempts: number, crashed = 0): string {
  const all = attempts === 1 ? 'it' : 'all of them';
  const died = crashed > 0 ? ` (the worker running it stopped in ${crashed === attempts ? all : `${crashed} of them`})` : '';
  return (
    `${jobMarker}\n❌ **RepGen** could not finish this run after ${attempts} attempt${attempts === 1 ? '' : 's'}${died}: ` +
    `${neutralise(reason.slice(0, 500))}\n\nThis is RepGen's failure, not a verdict on the bug. \`/repgen retry\` runs it again.`
  );
}

/** The final word of a run the queue lost (its Redis entry gone, e.g. Redis restarted without persistence). */
export function lostRunComment(jobMarker: string): string {
  return (
    `${jobMarker}\n❌ **RepGen** lost this run: its queue entry disappeared (the queue's Redis was reset or restarted ` +
    'without persistence), so it never finished and nothing more will run. `/repgen` starts it again.'
  );
}
